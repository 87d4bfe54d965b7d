package io.clustermirror.broker.sync;

import io.clustermirror.common.records.MirrorRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the sync supervisor changes for one image: the running syncs to stop, each with the reason it logs, and the
 * mirrors to start a sync for. Pure; {@link MetadataSyncManager} applies it.
 *
 * <p>Rules: a sync runs for each mirror of the image, built from the mirror's record as the image shows it. A sync whose
 * mirror is gone stops; so does one whose record changed (its configs, or the mirror was deleted and created again), and
 * a new one starts from the new record in the same round, with new source clients. A mirror whose sync could not be
 * built from its record is not tried again until its record changes: building it again would fail the same way every
 * round.
 *
 * @param stop  the mirrors whose running sync stops, with the reason, by name
 * @param start the records to start a sync from
 */
record SyncSupervision(Map<String, String> stop, List<MirrorRecord> start) {
    SyncSupervision {
        stop = Map.copyOf(stop);
        start = List.copyOf(start);
    }

    /**
     * @param running  the record each running sync was built from, by mirror name
     * @param mirrors  the mirrors of the current image, by name
     * @param unusable the record each mirror's sync could last not be built from, by mirror name
     */
    static SyncSupervision of(Map<String, MirrorRecord> running, Map<String, MirrorRecord> mirrors,
                              Map<String, MirrorRecord> unusable) {
        Map<String, String> stop = new TreeMap<>();
        running.forEach((name, before) -> {
            MirrorRecord now = mirrors.get(name);
            if (now == null) {
                stop.put(name, "mirror deleted");
            } else if (!now.equals(before)) {
                stop.put(name, now.createdMs() == before.createdMs() ? "configs changed: it restarts with new source clients"
                    : "mirror recreated");
            }
        });
        List<MirrorRecord> start = new ArrayList<>();
        new TreeMap<>(mirrors).forEach((name, record) -> {
            boolean keepsRunning = running.containsKey(name) && !stop.containsKey(name);
            if (!keepsRunning && !record.equals(unusable.get(name))) {
                start.add(record);
            }
        });
        return new SyncSupervision(stop, start);
    }
}
