package io.clustermirror.common.compat;

import org.apache.kafka.clients.ClientDnsLookup;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/** The checks of client configs that only Kafka's client internals can make, as a client would make them. */
public final class ClientInternals {
    private ClientInternals() {
    }

    /**
     * The addresses a client would connect to for {@code servers} ({@code host:port} entries), every DNS address of
     * each host included.
     *
     * @throws org.apache.kafka.common.config.ConfigException if an entry is not a valid address
     */
    public static List<InetSocketAddress> bootstrapAddresses(List<String> servers) {
        return ClientUtils.parseAndValidateAddresses(servers, ClientDnsLookup.USE_ALL_DNS_IPS);
    }

    /**
     * Parses a {@code sasl.jaas.config} value as a client would.
     *
     * @throws RuntimeException (Kafka's) if it is not a valid JAAS configuration; its message may quote the secret
     */
    public static void checkJaasConfig(String jaas) {
        JaasContext.loadClientContext(Map.of(SaslConfigs.SASL_JAAS_CONFIG, new Password(jaas)));
    }
}
