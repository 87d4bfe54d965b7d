package io.clustermirror.broker.sync;

import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SyncReaderTest {
    private static Optional<SyncedGroup.Kind> kindOf(Optional<GroupType> type, String protocol) {
        return SyncedGroup.kindOf(new GroupListing("g", type, protocol, Optional.of(GroupState.EMPTY)));
    }

    /** Share groups are listed only by brokers that have them; older brokers report no type at all. */
    @Test
    void listedGroupsAreConsumerOrShareGroupsByTypeAndProtocol() {
        assertEquals(Optional.of(SyncedGroup.Kind.SHARE), kindOf(Optional.of(GroupType.SHARE), "share"));
        assertEquals(Optional.of(SyncedGroup.Kind.CONSUMER), kindOf(Optional.of(GroupType.CONSUMER), "consumer"));
        assertEquals(Optional.of(SyncedGroup.Kind.CONSUMER), kindOf(Optional.of(GroupType.CLASSIC), ""), "a simple group");
        assertEquals(Optional.of(SyncedGroup.Kind.CONSUMER), kindOf(Optional.empty(), "consumer"), "a group of a broker before 3.8");
        assertEquals(Optional.empty(), kindOf(Optional.of(GroupType.CLASSIC), "connect"), "a Connect worker group");
        assertEquals(Optional.empty(), kindOf(Optional.empty(), "connect"));
        assertEquals(Optional.empty(), kindOf(Optional.of(GroupType.STREAMS), "streams"));
    }
}
