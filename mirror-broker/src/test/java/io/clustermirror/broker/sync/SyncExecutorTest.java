package io.clustermirror.broker.sync;

import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.broker.auth.TestRequestContext;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.clients.admin.CreateAclsOptions;
import org.apache.kafka.clients.admin.CreateAclsResult;
import org.apache.kafka.clients.admin.DeleteAclsOptions;
import org.apache.kafka.clients.admin.DeleteAclsResult;
import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.server.authorizer.Action;
import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SyncExecutorTest {
    private static final AclBinding ACL = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
        new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));

    /**
     * Kafka authorizes CreateAcls and DeleteAcls as ALTER on the cluster, whatever the ACLs: while the sync's call is in
     * flight its client must not hold that right through the extension, or any CLUSTER ALTER request of that client
     * would pass. The destination's ACLs decide instead.
     */
    @Test
    void theSyncsAclChangesGrantItsClientNoClusterAlter() {
        String clientId = InternalOperations.newClientId("cluster-mirror-sync-test");
        TestRequestContext syncClient = new TestRequestContext(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "mirror"), clientId);
        Action clusterAlter = new Action(AclOperation.ALTER,
            new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL), 1, true, true);
        List<String> internalDuringCall = new CopyOnWriteArrayList<>();
        MockAdminClient destination = new MockAdminClient() {
            @Override
            public synchronized CreateAclsResult createAcls(Collection<AclBinding> acls, CreateAclsOptions options) {
                internalDuringCall.add("CreateAcls " + InternalOperations.isInternal(syncClient, clusterAlter));
                throw new ClusterAuthorizationException("refused by the destination's ACLs");
            }

            @Override
            public synchronized DeleteAclsResult deleteAcls(Collection<AclBindingFilter> filters, DeleteAclsOptions options) {
                internalDuringCall.add("DeleteAcls " + InternalOperations.isInternal(syncClient, clusterAlter));
                throw new ClusterAuthorizationException("refused by the destination's ACLs");
            }
        };
        MockProducer<byte[], byte[]> state = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        MirrorImage image = new MirrorImage(Map.of(), Map.of(), Map.of(), Map.of());
        SyncExecutor executor = new SyncExecutor("dr", destination, clientId, state, null, () -> image, new ProblemLog("dr"),
            new SyncScheduler(new SteppedRunner(new MockTime()), new MockTime()));

        executor.execute(List.of(new SyncAction.CreateAcls(List.of(new SyncAction.Acl(ACL, "mirrored topic"))),
            new SyncAction.DeleteAcls(List.of(new SyncAction.Acl(ACL, "removed at the source")))));

        assertEquals(List.of("CreateAcls false", "DeleteAcls false"), internalDuringCall);
    }
}
