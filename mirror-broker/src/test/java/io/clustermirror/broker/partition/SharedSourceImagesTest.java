package io.clustermirror.broker.partition;

import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SharedSourceImagesTest {
    private static final MirrorConfig DR = config("dr", "source:9092");

    /** Counts reads; each returns a new image, so that assertSame tells which read served a call. */
    private static final class CountingReader implements Function<MirrorConfig, MirrorImage> {
        final List<String> reads = new ArrayList<>();
        Runnable duringRead = () -> { };

        @Override
        public MirrorImage apply(MirrorConfig config) {
            reads.add(config.name());
            duringRead.run();
            return new MirrorImage(Map.of(), Map.of(), Map.of(), Map.of(), null);
        }
    }

    private final CountingReader reader = new CountingReader();
    private final SharedSourceImages images = new SharedSourceImages(reader);

    private static MirrorConfig config(String name, String bootstrap) {
        return MirrorConfig.validate(name, Map.of(MirrorConfig.BOOTSTRAP_SERVERS, bootstrap));
    }

    @Test
    void preparationsRequestedBeforeAReadShareIt() {
        long first = images.ticket();
        long second = images.ticket();
        long third = images.ticket();

        MirrorImage read = images.image(DR, first);
        assertSame(read, images.image(DR, second));
        assertSame(read, images.image(DR, third));
        assertEquals(1, reader.reads.size(), "one read serves the three preparations queued before it began");
    }

    @Test
    void aPreparationRequestedAfterTheLastReadBeganReadsAgain() {
        MirrorImage before = images.image(DR, images.ticket());

        MirrorImage after = images.image(DR, images.ticket());
        assertNotSame(before, after);
        assertEquals(2, reader.reads.size());
    }

    @Test
    void aPreparationRequestedWhileAReadRunsDoesNotUseIt() {
        long[] requestedDuringRead = new long[1];
        reader.duringRead = () -> requestedDuringRead[0] = images.ticket();
        MirrorImage running = images.image(DR, images.ticket());
        reader.duringRead = () -> { };

        assertNotSame(running, images.image(DR, requestedDuringRead[0]),
            "the source may have written what that preparation needs after the running read passed it");
        assertEquals(2, reader.reads.size());
    }

    @Test
    void imagesAreNotSharedAcrossMirrorsOrChangedConfigs() {
        long ticket = images.ticket();
        MirrorImage dr = images.image(DR, ticket);

        assertNotSame(dr, images.image(config("backup", "source:9092"), ticket), "another mirror reads its own");
        assertNotSame(dr, images.image(config("dr", "other-source:9092"), ticket), "a changed source reads afresh");
        assertEquals(List.of("dr", "backup", "dr"), reader.reads);
    }

    @Test
    void aFailedReadThrowsAndTheNextPreparationReadsAgain() {
        long ticket = images.ticket();
        reader.duringRead = () -> {
            throw new IllegalStateException("source unreachable");
        };
        assertThrows(IllegalStateException.class, () -> images.image(DR, ticket));

        reader.duringRead = () -> { };
        images.image(DR, ticket);
        assertEquals(2, reader.reads.size(), "a failure is never served as an image");
    }

    @Test
    void aDeletedMirrorsImageIsDropped() {
        long ticket = images.ticket();
        MirrorImage read = images.image(DR, ticket);

        images.retain(Set.of("dr"));
        assertSame(read, images.image(DR, ticket));
        images.retain(Set.of());
        assertNotSame(read, images.image(DR, ticket));
        assertEquals(2, reader.reads.size());
    }
}
