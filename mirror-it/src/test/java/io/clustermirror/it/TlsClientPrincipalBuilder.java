package io.clustermirror.it;

import org.apache.kafka.common.security.auth.AuthenticationContext;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder;

/**
 * The principal builder of a test source's one-way TLS listener: its clients show no certificate, so Kafka's builder
 * names them {@code User:ANONYMOUS}, which is also the principal of the test brokers' own PLAINTEXT traffic and so a
 * super user. This one names them {@link #PRINCIPAL} instead, so that ACLs decide what they may do.
 */
public final class TlsClientPrincipalBuilder extends DefaultKafkaPrincipalBuilder {
    static final KafkaPrincipal PRINCIPAL = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "tls-client");

    public TlsClientPrincipalBuilder() {
        super(null, null);
    }

    @Override
    public KafkaPrincipal build(AuthenticationContext context) {
        KafkaPrincipal principal = super.build(context);
        return KafkaPrincipal.ANONYMOUS.equals(principal) ? PRINCIPAL : principal;
    }
}
