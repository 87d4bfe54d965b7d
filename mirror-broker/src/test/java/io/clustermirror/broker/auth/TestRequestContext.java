package io.clustermirror.broker.auth;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

import java.net.InetAddress;

/** A Produce request from a loopback client with the given principal and client id, as the authorizer sees it. */
public record TestRequestContext(KafkaPrincipal principal, String clientId) implements AuthorizableRequestContext {
    /** A client authenticated as {@code principal}, written {@code type:name} as in {@code super.users}. */
    public static TestRequestContext of(String principal) {
        String[] typeAndName = principal.split(":", 2);
        return new TestRequestContext(new KafkaPrincipal(typeAndName[0], typeAndName[1]), "test");
    }

    @Override
    public String listenerName() {
        return "PLAINTEXT";
    }

    @Override
    public SecurityProtocol securityProtocol() {
        return SecurityProtocol.PLAINTEXT;
    }

    @Override
    public InetAddress clientAddress() {
        return InetAddress.getLoopbackAddress();
    }

    @Override
    public int requestType() {
        return ApiKeys.PRODUCE.id;
    }

    @Override
    public int requestVersion() {
        return 0;
    }

    @Override
    public int correlationId() {
        return 0;
    }
}
