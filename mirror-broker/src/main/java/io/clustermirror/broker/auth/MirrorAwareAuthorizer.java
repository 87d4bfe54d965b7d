package io.clustermirror.broker.auth;

/**
 * Set as {@code authorizer.class.name} on every node of the destination cluster: denies client writes
 * to mirror topics until they are STOPPED and delegates everything else to Kafka's StandardAuthorizer,
 * so ACLs keep working.
 */
public class MirrorAwareAuthorizer {
}
