package io.clustermirror.broker.controller;

import io.clustermirror.common.SealedForm;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.secrets.SealingKey;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The configs of a mirror after an ALTER: pure, no I/O. The result is a complete, valid mirror config
 * ({@link MirrorConfig#validate}) or the ALTER is refused with INVALID_CONFIG naming the key, and the mirror keeps its
 * configs.
 *
 * <p>Invariants: {@code bootstrap.servers} is never deleted (a mirror always has a source); a sealed secret is bound
 * to how the source is reached ({@link SealingKey#BOUND_CONFIGS}: brokers, protocol, mechanism, truststore, ...), so
 * when one of those changes every sealed value must be given again in the same ALTER, never carried over to the new
 * connection. Messages name keys, never values of secrets.
 *
 * @param config          the validated configs after the change
 * @param connectionChanged true if a config of the source connection changed (any key but {@code mirror.*}): the
 *                          controller then proves the new connection against the source before storing it
 */
record MirrorConfigAlteration(MirrorConfig config, boolean connectionChanged) {

    /**
     * @param current the mirror as stored
     * @param set     configs to set (inline secrets already sealed by the client)
     * @param deleted keys to remove
     * @throws ClusterMirrorException INVALID_REQUEST when nothing is to change, INVALID_CONFIG for a bad key or value
     */
    static MirrorConfigAlteration of(MirrorRecord current, Map<String, String> set, List<String> deleted) {
        if (set.isEmpty() && deleted.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, "nothing to alter: give configs to set "
                + "(--add-config k=v) or to delete (--delete-config k)");
        }
        for (String key : new TreeSet<>(deleted)) {
            if (set.containsKey(key)) {
                throw invalid("config '" + key + "' is both set and deleted; give it once");
            }
            if (MirrorConfig.BOOTSTRAP_SERVERS.equals(key)) {
                throw invalid("config '" + key + "' cannot be deleted: a mirror always needs its source's brokers; give the "
                    + "new ones with --add-config " + key + "=host1:9092,host2:9092");
            }
            if (!current.configs().containsKey(key)) {
                throw invalid("config '" + key + "' is not set on mirror '" + current.name() + "', so it cannot be deleted; "
                    + "its configs are " + new TreeSet<>(current.configs().keySet()));
            }
        }
        Map<String, String> altered = new HashMap<>(current.configs());
        altered.putAll(set);
        deleted.forEach(altered::remove);
        MirrorConfig config = MirrorConfig.validate(current.name(), altered);
        List<String> connectionChanges = SealingKey.connectionBindingChanged(current.configs(), altered);
        if (!connectionChanges.isEmpty()) {
            TreeSet<String> boundToOld = new TreeSet<>();
            altered.forEach((key, value) -> {
                if (SealedForm.isSealed(value) && !set.containsKey(key)) {
                    boundToOld.add(key);
                }
            });
            if (!boundToOld.isEmpty()) {
                String changed = String.join(", ", connectionChanges);
                throw invalid("config(s) " + boundToOld + " are encrypted for the mirror's current " + changed
                    + " and are not used with other values: give them again in the same command as the new " + changed
                    + " (--add-config " + boundToOld.first() + "=...), or refer to a "
                    + "config provider instead");
            }
        }
        boolean connectionChanged = altered.keySet().stream().anyMatch(k -> !k.startsWith("mirror.")
                && !Objects.equals(altered.get(k), current.configs().get(k)))
            || deleted.stream().anyMatch(k -> !k.startsWith("mirror."));
        return new MirrorConfigAlteration(config, connectionChanged);
    }

    private static ClusterMirrorException invalid(String message) {
        return new ClusterMirrorException(MirrorError.INVALID_CONFIG, message);
    }
}
