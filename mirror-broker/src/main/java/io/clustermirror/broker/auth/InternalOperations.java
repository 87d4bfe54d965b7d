package io.clustermirror.broker.auth;

import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;

import java.security.SecureRandom;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The extension's own requests to its (destination) cluster that bypass ACL checks and the read-only rule of
 * mirror topics (the metadata sync's CreatePartitions, OffsetCommit, AlterShareGroupOffsets and
 * IncrementalAlterConfigs): a registry of operations in flight, consulted by {@link MirrorAwareAuthorizer}. The sync's
 * CreateAcls and DeleteAcls are not among them: Kafka authorizes those by ALTER on the CLUSTER whatever the ACLs they
 * carry, so a registration could not be limited to the ACLs the sync means to change; they are authorized by the
 * destination's ACLs like any client's.
 *
 * <p>How: the extension builds the client it uses for such requests with a client id from
 * {@link #newClientId} (a prefix plus 128 random bits, one per client), and wraps each call in
 * {@link #begin}, naming the exact resources and operations the request will be authorized for. While the
 * call is in flight, an authorization of one of those (literal resource, operation) pairs for a request with
 * that client id is ALLOWED; before and after, nothing is. A request that matches nothing is authorized as
 * usual.
 *
 * <p>Limits:
 * <ul>
 *   <li>The registry is a static of this JVM: it works where the authorizer that checks the request runs in
 *       the same JVM as the extension that sent it: the broker itself, a combined (broker + controller) node,
 *       and every node of the test kit. CreatePartitions and IncrementalAlterConfigs are checked by the active
 *       KRaft controller, OffsetCommit and AlterShareGroupOffsets by the group coordinator broker: on a node in
 *       another JVM the request is authorized normally, so give the extension's local clients a principal with the needed ACLs (e.g. the
 *       broker's super user, through {@code cluster.mirror.local.*}).</li>
 *   <li>Client ids are not authenticated. The random part is never logged by the extension, but Kafka may show
 *       client ids (request logs at DEBUG, per-client metrics). Someone who learns one could pass for the
 *       extension only for the exact resources and operations of a call in flight, only during that call.</li>
 *   <li>On a controller-only node (its own JVM) the registry is empty. There, the metadata sync's CreatePartitions and
 *       IncrementalAlterConfigs of a read-only mirror topic pass if the request has a client id of this form
 *       ({@link #isExtensionClientId}) and a principal trusted for the control plane: a super user when ACLs are on,
 *       anyone when they are off (then any client may write the control plane anyway). That trusts the principal, not
 *       the call: a super user's client that copies the form can grow a mirror topic, never delete it, and change its
 *       configs only by IncrementalAlterConfigs and only to the values the sync declared ({@link MirrorConfigPolicy}).</li>
 *   <li>A call that times out on the client and is retried later by the broker may then be denied: the next
 *       sync round retries it.</li>
 * </ul>
 */
public final class InternalOperations {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** The prefix of every client id of the extension's internal clients. */
    public static final String CLIENT_ID_PREFIX = "cluster-mirror-";
    private static final java.util.regex.Pattern CLIENT_ID = java.util.regex.Pattern.compile(
        java.util.regex.Pattern.quote(CLIENT_ID_PREFIX) + ".*-[0-9a-f]{32}");
    /** In-flight operations by client id; the count allows the same operation twice at once. */
    private static final Map<String, Map<Operation, Integer>> IN_FLIGHT = new ConcurrentHashMap<>();

    /** One literal resource and the operation a request is authorized for. */
    public record Operation(ResourceType resourceType, String name, AclOperation operation) {
        public static Operation topic(String topic, AclOperation operation) {
            return new Operation(ResourceType.TOPIC, topic, operation);
        }

        public static Operation group(String group, AclOperation operation) {
            return new Operation(ResourceType.GROUP, group, operation);
        }

        /** An operation on the cluster resource (e.g. ALTER for ElectLeaders and AlterPartitionReassignments). */
        public static Operation cluster(AclOperation operation) {
            return new Operation(ResourceType.CLUSTER, "kafka-cluster", operation);
        }
    }

    /** The registration of one call; closing it ends the bypass. */
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    private InternalOperations() {
    }

    /**
     * A client id for an internal client: {@code prefix} plus an unguessable suffix.
     *
     * @param prefix starts with {@value #CLIENT_ID_PREFIX}
     */
    public static String newClientId(String prefix) {
        if (!prefix.startsWith(CLIENT_ID_PREFIX)) {
            throw new IllegalArgumentException("an internal client id starts with " + CLIENT_ID_PREFIX + ": " + prefix);
        }
        byte[] token = new byte[16];
        RANDOM.nextBytes(token);
        return prefix + "-" + HexFormat.of().formatHex(token);
    }

    /** Registers the operations of one call by the client {@code clientId} until the returned scope is closed. */
    public static Scope begin(String clientId, Collection<Operation> operations) {
        List<Operation> ops = List.copyOf(operations);
        IN_FLIGHT.compute(clientId, (k, mine) -> {
            Map<Operation, Integer> m = mine == null ? new ConcurrentHashMap<>() : mine;
            ops.forEach(op -> m.merge(op, 1, Integer::sum));
            return m;
        });
        return () -> IN_FLIGHT.computeIfPresent(clientId, (k, mine) -> {
            ops.forEach(op -> mine.computeIfPresent(op, (o, n) -> n == 1 ? null : n - 1));
            return mine.isEmpty() ? null : mine;
        });
    }

    /** Whether the client id has the form of {@link #newClientId}'s (which anyone can copy: see the class comment). */
    public static boolean isExtensionClientId(String clientId) {
        return clientId != null && CLIENT_ID.matcher(clientId).matches();
    }

    /** True if the action is an in-flight internal operation of the request's client. */
    public static boolean isInternal(AuthorizableRequestContext context, Action action) {
        if (IN_FLIGHT.isEmpty() || context.clientId() == null) {
            return false;
        }
        Map<Operation, Integer> ops = IN_FLIGHT.get(context.clientId());
        return ops != null && action.resourcePattern().patternType() == PatternType.LITERAL
            && ops.containsKey(new Operation(action.resourcePattern().resourceType(), action.resourcePattern().name(), action.operation()));
    }

    /** The authorizer's hook: turns the results of in-flight internal operations into ALLOWED. */
    static List<AuthorizationResult> allowInternal(AuthorizableRequestContext context, List<Action> actions,
                                                   List<AuthorizationResult> results) {
        for (int i = 0; i < actions.size(); i++) {
            if (isInternal(context, actions.get(i))) {
                results.set(i, AuthorizationResult.ALLOWED);
            }
        }
        return results;
    }
}
