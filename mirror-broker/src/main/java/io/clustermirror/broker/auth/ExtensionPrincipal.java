package io.clustermirror.broker.auth;

import io.clustermirror.broker.node.LocalClients;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The principal a destination broker's authorizer sees for the extension's own clients, as far as a node's
 * configuration tells it before the node starts, and the refusal of an enforcing node on which that principal is no
 * super user: there the extension can never create or write its internal topics, so every mirror command would wait
 * for a controller that cannot work.
 *
 * <p>The clients connect with {@code cluster.mirror.local.*} ({@link LocalClients}). Kafka's default principal builder
 * makes the principal {@code User:ANONYMOUS} on PLAINTEXT and {@code User:<username>} for SASL PLAIN and SCRAM. Any other
 * case (TLS client certificates, GSSAPI, OAUTHBEARER, a custom principal builder, a JAAS config behind a config
 * provider) cannot be told from the configuration alone: then nothing is refused, and the authorizer's denial line names
 * the fix at run time.
 */
public final class ExtensionPrincipal {
    private static final String DEFAULT_PRINCIPAL_BUILDER = "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder";
    private static final Set<String> USERNAME_MECHANISMS = Set.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");
    private static final Pattern USERNAME = Pattern.compile("\\busername\\s*=\\s*(?:\"([^\"]*)\"|([^\\s;\"]+))");

    private ExtensionPrincipal() {
    }

    /** The principal ({@code type:name}) of the extension's clients, when the configuration alone tells it. */
    public static Optional<String> of(Map<String, String> configs) {
        boolean customBuilder = configs.entrySet().stream()
            .anyMatch(e -> e.getKey().endsWith("principal.builder.class") && !e.getValue().trim().isEmpty()
                && !e.getValue().trim().equals(DEFAULT_PRINCIPAL_BUILDER));
        if (customBuilder) {
            return Optional.empty();
        }
        String protocol = configs.getOrDefault(LocalClients.PREFIX + "security.protocol", "PLAINTEXT").trim().toUpperCase(Locale.ROOT);
        if (protocol.equals("PLAINTEXT")) {
            return Optional.of("User:ANONYMOUS");
        }
        if (!protocol.startsWith("SASL_")) {
            return Optional.empty();
        }
        String mechanism = configs.getOrDefault(LocalClients.PREFIX + "sasl.mechanism", "GSSAPI").trim().toUpperCase(Locale.ROOT);
        String jaas = configs.getOrDefault(LocalClients.PREFIX + "sasl.jaas.config", "");
        if (!USERNAME_MECHANISMS.contains(mechanism) || jaas.contains("${")) {
            return Optional.empty();
        }
        Matcher m = USERNAME.matcher(jaas);
        if (!m.find()) {
            return Optional.empty();
        }
        return Optional.of("User:" + (m.group(1) != null ? m.group(1) : m.group(2)));
    }

    /**
     * The refusal of a broker node that enforces ACLs while the extension's principal is no super user, or empty when
     * the node is fine or its configuration cannot tell. Only broker nodes are checked: a controller-only node need not
     * carry the brokers' {@code cluster.mirror.local.*} settings, so its derived principal could be wrong.
     *
     * @param configs the node's configuration, with ACLs enforced by the read-only authorizer
     */
    public static Optional<String> refusal(Map<String, String> configs) {
        String roles = configs.getOrDefault("process.roles", "broker");
        if (!roles.contains("broker")) {
            return Optional.empty();
        }
        Optional<String> principal = of(configs);
        if (principal.isEmpty()) {
            return Optional.empty();
        }
        String configured = configs.getOrDefault(MirrorAwareAuthorizer.SUPER_USERS_CONFIG, "");
        if (MirrorAwareAuthorizer.superUsers(configured).contains(principal.get())) {
            return Optional.empty();
        }
        String fixed = configured.trim().isEmpty() ? principal.get() : configured.trim() + ";" + principal.get();
        return Optional.of(MirrorAwareAuthorizer.SUPER_USERS_CONFIG + " does not name " + principal.get() + ", the principal of the Cluster Mirror "
            + "extension's own clients (" + LocalClients.PREFIX + "security.protocol=" + configs.getOrDefault(LocalClients.PREFIX
            + "security.protocol", "PLAINTEXT") + "): with ACLs enforced it could not create or write its internal topics and "
            + "every mirror command would time out. Set " + MirrorAwareAuthorizer.SUPER_USERS_CONFIG + "=" + fixed + " on every node, or authenticate "
            + "the extension's clients (" + LocalClients.PREFIX + "*) as a principal that is a super user");
    }
}
