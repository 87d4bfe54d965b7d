package io.clustermirror.admin.cli;

import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.ClusterMirrorListing;
import io.clustermirror.admin.HeldLogStart;
import io.clustermirror.admin.HeldTopicChange;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.admin.PartitionVerification;
import io.clustermirror.admin.PartitionCatchUp;
import io.clustermirror.admin.StartPreview;
import io.clustermirror.admin.SplitTransaction;
import io.clustermirror.admin.StopPreview;
import io.clustermirror.admin.StopTransactions;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Renders admin results as the tool prints them: text for people, JSON for scripts. The JSON documents have a
 * {@code version} and a fixed set of fields (unknown values are null), so scripts can rely on their shape.
 */
public final class OutputFormatter {
    static final int JSON_VERSION = 1;
    private static final String NONE = "-";
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private OutputFormatter() {
    }

    /** One line per mirror, name first. Nothing for no mirrors, like {@code kafka-topics.sh --list}. */
    public static String listText(Collection<ClusterMirrorListing> listings) {
        StringBuilder out = new StringBuilder();
        for (ClusterMirrorListing l : listings) {
            out.append(l.name()).append("  source=").append(l.sourceBootstrapServers())
                .append("  source-cluster-id=").append(l.sourceClusterId())
                .append("  topics=").append(l.topicCount()).append('\n');
        }
        return out.toString();
    }

    public static String listJson(Collection<ClusterMirrorListing> listings) {
        ObjectNode root = root();
        ArrayNode mirrors = root.putArray("mirrors");
        for (ClusterMirrorListing l : listings) {
            mirrors.addObject()
                .put("name", l.name())
                .put("sourceBootstrapServers", l.sourceBootstrapServers())
                .put("sourceClusterId", l.sourceClusterId())
                .put("topicCount", l.topicCount());
        }
        return json(root);
    }

    /**
     * Per mirror: a header (name, source, source cluster id, topic count), the configs other than
     * {@code bootstrap.servers} if any, and a table with a row per partition. TRUNCATED and BARRIER columns appear when
     * some partition of the mirror has one, i.e. once topics were stopped. LAST-ERROR comes last because it is
     * free text. Under the table, the command that last changed each topic.
     */
    public static String describeTable(Collection<ClusterMirrorDescription> descriptions) {
        List<String> blocks = new ArrayList<>();
        for (ClusterMirrorDescription d : descriptions) {
            StringBuilder out = new StringBuilder();
            out.append("Mirror: ").append(d.name())
                .append("\tSource: ").append(d.sourceBootstrapServers())
                .append("\tSource cluster id: ").append(d.sourceClusterId())
                .append("\tTopics: ").append(d.topics().size()).append('\n');
            Map<String, String> configs = new TreeMap<>(d.configs());
            configs.remove(MirrorConfig.BOOTSTRAP_SERVERS);
            if (!configs.isEmpty()) {
                out.append("Configs: ").append(configs.entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "))).append('\n');
            }
            out.append(partitionTable(d.topics()));
            out.append(heldTopicChanges(d.topics()));
            out.append(lastCommands(d.topics()));
            d.transactions().ifPresent(t -> out.append("Transactions, if all the mirror's mirroring topics were stopped now:\n")
                .append(transactionsText(t, false)));
            blocks.add(out.toString());
        }
        return String.join("\n", blocks);
    }

    public static String describeJson(Collection<ClusterMirrorDescription> descriptions) {
        ObjectNode root = root();
        ArrayNode mirrors = root.putArray("mirrors");
        for (ClusterMirrorDescription d : descriptions) {
            ObjectNode mirror = mirrors.addObject()
                .put("name", d.name())
                .put("sourceBootstrapServers", d.sourceBootstrapServers())
                .put("sourceClusterId", d.sourceClusterId());
            ObjectNode configs = mirror.putObject("configs");
            new TreeMap<>(d.configs()).forEach(configs::put);
            d.transactions().ifPresent(t -> putTransactions(mirror.putObject("transactions"), t));
            ArrayNode topics = mirror.putArray("topics");
            for (MirrorTopicDescription t : d.topics()) {
                ObjectNode topic = topics.addObject()
                    .put("topic", t.topic())
                    .put("desiredState", t.desiredState().name());
                if (t.lastCommand() == null) {
                    topic.putNull("lastCommand");
                } else {
                    topic.putObject("lastCommand")
                        .put("commandId", t.lastCommand().commandId())
                        .put("operation", t.lastCommand().operation())
                        .put("appliedMs", t.lastCommand().appliedMs())
                        .put("result", t.lastCommand().result());
                }
                ArrayNode heldChanges = topic.putArray("heldChanges");
                t.heldChanges().forEach(c -> heldChanges.addObject().put("change", c.change()).put("sinceMs", c.sinceMs())
                    .put("status", c.status()).put("appliesAtMs", c.appliesAtMs()));
                ArrayNode partitions = topic.putArray("partitions");
                for (MirrorPartitionDescription p : t.partitions()) {
                    ObjectNode partition = partitions.addObject()
                        .put("partition", p.partition())
                        .put("state", p.state().name());
                    putKnown(partition, "sourceEndOffset", p.sourceEndOffset());
                    putKnown(partition, "destinationEndOffset", p.destinationEndOffset());
                    putKnown(partition, "lag", p.lag());
                    putKnown(partition, "lag_ms", p.lagMs());
                    putKnown(partition, "lastMirroredOffset", p.lastMirroredOffset());
                    putKnown(partition, "lastMirroredEpoch", p.lastMirroredEpoch());
                    partition.put("lastError", p.lastError());
                    putKnown(partition, "barrierOffset", p.barrierOffset());
                    putKnown(partition, "truncatedFromOffset", p.truncatedFromOffset());
                    putKnown(partition, "truncatedToOffset", p.truncatedToOffset());
                    putKnown(partition, "leaderId", p.leaderId());
                    ArrayNode held = partition.putArray("heldLogStarts");
                    p.heldLogStarts().forEach(h -> held.addObject().put("offset", h.offset()).put("sinceMs", h.sinceMs())
                        .put("appliesAtMs", h.appliesAtMs()));
                    if (p.state() == PartitionState.FAILED) {
                        partition.put("failedAttempts", p.failedAttempts()).put("recoverable", p.recoverable());
                        putKnown(partition, "nextRetryMs", p.nextRetryMs());
                    }
                }
            }
        }
        return json(root);
    }

    /** For --start, --stop, --pause and --resume, e.g. "Started mirroring 2 topics of mirror 'dr': a, b". */
    public static String mirrorTopicsChanged(String verb, String mirror, List<String> topics) {
        return verb + " mirroring " + topics.size() + (topics.size() == 1 ? " topic" : " topics") + " of mirror '"
            + mirror + "'" + (topics.isEmpty() ? "" : ": " + String.join(", ", topics));
    }

    /** For --recover, e.g. "Recovering the FAILED partitions of 1 topic of mirror 'dr': orders". */
    public static String recovered(String mirror, List<String> topics) {
        return "Recovering the FAILED partitions of " + topics.size() + (topics.size() == 1 ? " topic" : " topics") + " of mirror '"
            + mirror + "'" + (topics.isEmpty() ? "" : ": " + String.join(", ", topics)) + "; see --describe";
    }

    /** For --apply-held and --reject-held, e.g. "Applied what 1 topic of mirror 'dr' holds back: orders". */
    public static String heldChangesDecided(String verb, String mirror, List<String> topics) {
        return verb + " what " + topics.size() + (topics.size() == 1 ? " topic" : " topics") + " of mirror '" + mirror
            + "' " + (topics.size() == 1 ? "holds" : "hold") + " back" + (topics.isEmpty() ? "" : ": " + String.join(", ", topics));
    }

    /** What --alter changed, by config name only: a value may be a secret. */
    public static String mirrorConfigsAltered(String mirror, java.util.Collection<String> set, java.util.Collection<String> deleted) {
        return "Altered cluster mirror '" + mirror + "'"
            + (set.isEmpty() ? "" : "; set " + String.join(", ", new java.util.TreeSet<>(set)))
            + (deleted.isEmpty() ? "" : "; deleted " + String.join(", ", new java.util.TreeSet<>(deleted))) + ".";
    }

    private static String partitionTable(List<MirrorTopicDescription> topics) {
        if (topics.isEmpty()) {
            return "(no topics)\n";
        }
        List<Column<Row>> columns = new ArrayList<>(List.of(
            new Column<>("TOPIC", Row::topic),
            new Column<>("PARTITION", r -> String.valueOf(r.partition().partition())),
            new Column<>("STATE", r -> r.partition().state().name()),
            new Column<>("SOURCE-END", r -> known(r.partition().sourceEndOffset())),
            new Column<>("DEST-END", r -> known(r.partition().destinationEndOffset())),
            new Column<>("LAG", r -> known(r.partition().lag())),
            new Column<>("LAG-MS", r -> known(r.partition().lagMs()))));
        List<Row> rows = topics.stream()
            .flatMap(t -> t.partitions().stream().map(p -> new Row(t.topic(), p)))
            .collect(Collectors.toList());
        addIfAnyRow(columns, rows, new Column<>("TRUNCATED", r -> r.partition().truncatedFromOffset() < 0 ? NONE
            : "[" + r.partition().truncatedFromOffset() + "," + r.partition().truncatedToOffset() + ")"),
            r -> r.partition().truncatedFromOffset() >= 0);
        addIfAnyRow(columns, rows, new Column<>("BARRIER", r -> known(r.partition().barrierOffset())),
            r -> r.partition().barrierOffset() >= 0);
        // The first held move applies first; the highest is where the destination's log start will end up.
        addIfAnyRow(columns, rows, new Column<>("HELD-LOG-START", r -> r.partition().heldLogStarts().isEmpty() ? NONE
            : heldLogStart(r.partition().heldLogStarts())), r -> !r.partition().heldLogStarts().isEmpty());
        addIfAnyRow(columns, rows, new Column<>("RETRY", r -> retry(r.partition())), r -> r.partition().state() == PartitionState.FAILED);
        columns.add(new Column<>("LAST-ERROR", r -> r.partition().lastError() == null ? NONE
            // One row per partition, whatever the error text holds.
            : r.partition().lastError().replaceAll("\\s+", " ")));
        return table(columns, rows);
    }

    /**
     * How a FAILED partition tries again: {@code 3 attempts, next at <when>}, {@code 11 attempts, --recover} once its retries
     * are used up, or {@code never, --stop} when no retry can help.
     */
    private static String retry(MirrorPartitionDescription p) {
        if (p.state() != PartitionState.FAILED || p.failedAttempts() == 0) {
            return NONE; // not failed, or its leader did not record how it retries
        }
        if (!p.recoverable()) {
            return "never, --stop";
        }
        return p.failedAttempts() + (p.failedAttempts() == 1 ? " attempt, " : " attempts, ")
            + (p.nextRetryMs() < 0 ? "--recover" : "next at " + Instant.ofEpochMilli(p.nextRetryMs()));
    }

    /** Held moves as {@code <offset> at <when it applies>}, the first one, and how many more follow. */
    private static String heldLogStart(List<HeldLogStart> held) {
        HeldLogStart first = held.get(0);
        return first.offset() + " at " + Instant.ofEpochMilli(first.appliesAtMs())
            + (held.size() > 1 ? " (+" + (held.size() - 1) + " more)" : "");
    }

    /**
     * A failover dry-run, one row per partition: the destination's end and last stable offset, the range the stop would
     * truncate with its records, and the producer ids of the open transactions that cause it. A summary line follows.
     */
    public static String stopPreviewTable(List<StopPreview> previews, StopTransactions transactions) {
        List<Column<StopPreview>> columns = List.of(
            new Column<>("TOPIC", StopPreview::topic),
            new Column<>("PARTITION", p -> String.valueOf(p.partition())),
            new Column<>("STATE", p -> p.state().name()),
            new Column<>("DEST-END", p -> known(p.destinationEndOffset())),
            new Column<>("LAST-STABLE", p -> known(p.lastStableOffset())),
            new Column<>("WOULD-TRUNCATE", p -> p.truncates() ? "[" + p.truncateFromOffset() + "," + p.truncateToOffset() + ")" : NONE),
            new Column<>("RECORDS", p -> String.valueOf(p.recordsToTruncate())),
            new Column<>("LAG-MS", p -> known(p.lagMs())),
            new Column<>("OPEN-PRODUCER-IDS", p -> p.openProducerIds().isEmpty() ? NONE
                : p.openProducerIds().stream().map(String::valueOf).collect(Collectors.joining(","))));
        long truncating = previews.stream().filter(StopPreview::truncates).count();
        long records = previews.stream().mapToLong(StopPreview::recordsToTruncate).sum();
        return table(columns, previews) + "Dry run, nothing changed: a stop now would truncate " + records + " record(s) in "
            + truncating + " of " + previews.size() + " partition(s).\n" + transactionsText(transactions, false);
    }

    /**
     * The committed transactions a plain stop splits (each with what every partition keeps and removes of it), where a
     * consistent stop cuts instead, and what the analysis could not see: after a dry-run's table, or after a consistent
     * stop ({@code stopped}).
     */
    public static String transactionsText(StopTransactions transactions, boolean stopped) {
        StringBuilder out = new StringBuilder();
        String would = stopped ? "a plain stop would have split " : "a plain stop now would split ";
        out.append(transactions.split().isEmpty() ? "No committed transaction seen is split by a plain stop.\n"
            : "Split transactions: " + would + transactions.split().size() + " committed transaction(s), visible on some "
                + "partitions and not (or not whole) on others:\n");
        for (SplitTransaction t : transactions.split()) {
            out.append("  producer ").append(t.producerId()).append(" epoch ").append(t.producerEpoch()).append(": ")
                .append(t.parts().stream().map(OutputFormatter::splitPart).collect(Collectors.joining("; "))).append('\n');
        }
        List<StopTransactions.ConsistentCut> lower = transactions.cuts().stream().filter(c -> c.offset() < c.lastStableOffset()).toList();
        String verb = stopped ? "The consistent stop cuts " : "A consistent stop (--stop --consistent) would cut ";
        out.append(verb).append(transactions.extraRecords()).append(" record(s) more than a plain stop, on ").append(lower.size())
            .append(" partition(s)").append(lower.isEmpty() ? "" : ": " + lower.stream().limit(10)
                .map(c -> c.topic() + "-" + c.partition() + " at " + c.offset() + " (not " + c.lastStableOffset() + ")")
                .collect(Collectors.joining(", ")) + (lower.size() > 10 ? " and " + (lower.size() - 10) + " more" : "")).append(".\n");
        out.append(groupOffsetsText(transactions, stopped));
        transactions.limits().forEach(limit -> out.append("Not seen: ").append(limit).append(".\n"));
        return out.toString();
    }

    /** The offsets a consistent stop gives groups that commit in transactions, as a line; empty when there are none. */
    private static String groupOffsetsText(StopTransactions transactions, boolean stopped) {
        List<StopTransactions.GroupOffset> groups = transactions.groupOffsets().stream().filter(g -> g.offset() >= 0).toList();
        if (groups.isEmpty()) {
            return "";
        }
        return (stopped ? "The consistent stop gives " : "A consistent stop would give ") + groups.size()
            + " offset(s) of groups that commit in transactions, the last transaction kept's: "
            + groups.stream().limit(10).map(g -> "'" + g.group() + "' " + g.topic() + "-" + g.partition() + " at " + g.offset()
                + (g.commitsCut() > 0 ? " (" + g.commitsCut() + " later commit(s) cut)" : "")).collect(Collectors.joining(", "))
            + (groups.size() > 10 ? " and " + (groups.size() - 10) + " more" : "") + ".\n";
    }

    /** A failover dry-run as JSON: a {@code partitions} array with one object per partition. */
    public static String stopPreviewJson(List<StopPreview> previews, StopTransactions transactions) {
        ObjectNode root = root();
        putTransactions(root, transactions);
        ArrayNode partitions = root.putArray("partitions");
        for (StopPreview p : previews) {
            ObjectNode node = partitions.addObject()
                .put("topic", p.topic())
                .put("partition", p.partition())
                .put("state", p.state().name());
            putKnown(node, "destination_end", p.destinationEndOffset());
            putKnown(node, "last_stable_offset", p.lastStableOffset());
            putKnown(node, "truncate_from", p.truncateFromOffset());
            putKnown(node, "truncate_to", p.truncateToOffset());
            node.put("records_to_truncate", p.recordsToTruncate());
            putKnown(node, "lag_ms", p.lagMs());
            ArrayNode ids = node.putArray("open_producer_ids");
            p.openProducerIds().forEach(ids::add);
        }
        return json(root);
    }

    private static String splitPart(SplitTransaction.Part p) {
        String where = p.topic() + "-" + p.partition();
        if (p.lastDataOffset() < 0) {
            return where + " holds none of its records (the source's transaction log says it wrote there)";
        }
        return where + " keeps " + p.keptRecords() + " of " + (p.keptRecords() + p.removedRecords()) + " record(s) "
            + (p.firstOffset() >= 0 ? "[" + p.firstOffset() : "(") + ".." + p.lastDataOffset() + "]"
            + (p.markerOffset() >= 0 ? ", commit at " + p.markerOffset() : ", commit not mirrored");
    }

    /** A consistent stop as JSON: the topics stopped, the split transactions, the cuts and the limits. */
    public static String consistentStopJson(String mirror, List<String> topics, StopTransactions transactions) {
        ObjectNode root = root().put("mirror", mirror);
        ArrayNode stopped = root.putArray("topics");
        topics.forEach(stopped::add);
        putTransactions(root, transactions);
        return json(root);
    }

    private static void putTransactions(ObjectNode root, StopTransactions transactions) {
        ArrayNode split = root.putArray("split_transactions");
        for (SplitTransaction t : transactions.split()) {
            ArrayNode parts = split.addObject().put("producer_id", t.producerId()).put("producer_epoch", t.producerEpoch()).putArray("parts");
            for (SplitTransaction.Part p : t.parts()) {
                parts.addObject().put("topic", p.topic()).put("partition", p.partition()).put("first_offset", p.firstOffset())
                    .put("last_offset", p.lastDataOffset()).put("marker_offset", p.markerOffset()).put("kept_records", p.keptRecords())
                    .put("removed_records", p.removedRecords());
            }
        }
        ArrayNode cuts = root.putArray("consistent_cuts");
        for (StopTransactions.ConsistentCut c : transactions.cuts()) {
            cuts.addObject().put("topic", c.topic()).put("partition", c.partition()).put("offset", c.offset())
                .put("last_stable_offset", c.lastStableOffset()).put("extra_records", c.extraRecords());
        }
        root.put("extra_records", transactions.extraRecords());
        ArrayNode groups = root.putArray("group_offsets");
        for (StopTransactions.GroupOffset g : transactions.groupOffsets()) {
            groups.addObject().put("group", g.group()).put("topic", g.topic()).put("partition", g.partition()).put("offset", g.offset())
                .put("commits_cut", g.commitsCut());
        }
        root.put("source_log_current", transactions.sourceLogCurrent());
        if (transactions.sourceLogReadUpToMs() >= 0) {
            root.put("source_log_read_up_to_ms", transactions.sourceLogReadUpToMs());
        } else {
            root.putNull("source_log_read_up_to_ms");
        }
        ArrayNode limits = root.putArray("limits");
        transactions.limits().forEach(limits::add);
    }

    /**
     * A start dry-run, one row per partition: this mirror's barrier and the source's (failback), the destination's end,
     * what decides the cut, the range the start would truncate and the records in it. A summary line follows.
     */
    public static String startPreviewTable(List<StartPreview> previews) {
        List<Column<StartPreview>> columns = List.of(
            new Column<>("TOPIC", StartPreview::topic),
            new Column<>("PARTITION", p -> String.valueOf(p.partition())),
            new Column<>("STATE", p -> p.state().name()),
            new Column<>("BARRIER", p -> known(p.barrierOffset())),
            new Column<>("SOURCE-BARRIER", p -> known(p.sourceBarrierOffset())),
            new Column<>("DEST-END", p -> known(p.destinationEndOffset())),
            new Column<>("CUT", p -> p.cut().name()),
            new Column<>("WOULD-TRUNCATE", p -> p.truncates() ? "[" + p.truncateFromOffset() + "," + p.truncateToOffset() + ")" : NONE),
            new Column<>("RECORDS", p -> String.valueOf(p.recordsToTruncate())));
        long truncating = previews.stream().filter(StartPreview::truncates).count();
        long records = previews.stream().mapToLong(StartPreview::recordsToTruncate).sum();
        long compared = previews.stream().filter(p -> p.cut() == StartPreview.Cut.BATCH_COMPARISON).count();
        return table(columns, previews) + "Dry run, nothing changed: a start now would truncate " + records + " record(s) in "
            + truncating + " of " + previews.size() + " partition(s)"
            + (records > 0 ? "; it needs --discard-local-writes" : "")
            + (compared > 0 ? "; " + compared + " partition(s) without a barrier are cut where their batches first differ "
                + "from the source's, found only when the start compares them" : "") + ".\n";
    }

    /** A start dry-run as JSON: a {@code partitions} array with one object per partition. */
    public static String startPreviewJson(List<StartPreview> previews) {
        ObjectNode root = root();
        ArrayNode partitions = root.putArray("partitions");
        for (StartPreview p : previews) {
            ObjectNode node = partitions.addObject()
                .put("topic", p.topic())
                .put("partition", p.partition())
                .put("state", p.state().name());
            putKnown(node, "barrier_offset", p.barrierOffset());
            putKnown(node, "source_barrier_offset", p.sourceBarrierOffset());
            putKnown(node, "destination_end", p.destinationEndOffset());
            node.put("cut", p.cut().name());
            putKnown(node, "truncate_from", p.truncateFromOffset());
            putKnown(node, "truncate_to", p.truncateToOffset());
            node.put("records_to_truncate", p.recordsToTruncate());
        }
        return json(root);
    }

    /**
     * A planned stop as JSON: {@code stopped} true with the {@code topics} stopped, or false with the
     * {@code partitions_behind} (offsets of both sides and the {@code lag} in offsets) when it timed out.
     */
    public static String plannedStopJson(String mirror, List<String> stoppedTopics, List<PartitionCatchUp> behind) {
        ObjectNode root = root().put("mirror", mirror).put("stopped", behind.isEmpty());
        ArrayNode topics = root.putArray("topics");
        stoppedTopics.forEach(topics::add);
        ArrayNode partitions = root.putArray("partitions_behind");
        for (PartitionCatchUp p : behind) {
            ObjectNode node = partitions.addObject()
                .put("topic", p.topic())
                .put("partition", p.partition())
                .put("state", p.state().name());
            putKnown(node, "source_last_stable_offset", p.sourceLastStableOffset());
            putKnown(node, "source_end", p.sourceEndOffset());
            putKnown(node, "destination_last_stable_offset", p.destinationLastStableOffset());
            putKnown(node, "destination_end", p.destinationEndOffset());
            putKnown(node, "lag", p.lag());
            putKnown(node, "lag_ms", p.lagMs());
            node.put("source_transaction_open", p.sourceTransactionOpen());
        }
        return json(root);
    }

    /**
     * An integrity check, one line per partition: {@code topic-partition IDENTICAL [from, to)} or
     * {@code topic-partition DIFFERS at offset N: what}, then a summary line.
     */
    public static String verifyText(List<PartitionVerification> verifications) {
        StringBuilder out = new StringBuilder();
        for (PartitionVerification v : verifications) {
            out.append(v.topic()).append('-').append(v.partition()).append("  ");
            if (v.identical()) {
                out.append("IDENTICAL [").append(v.verifiedFrom()).append(", ").append(v.verifiedTo()).append(")  ")
                    .append(v.batches()).append(" batches, ").append(v.bytes()).append(" bytes");
            } else if (v.firstDifferenceOffset() >= 0) {
                out.append("DIFFERS at offset ").append(v.firstDifferenceOffset()).append(": ").append(oneLine(v.difference()));
            } else {
                out.append("NOT VERIFIED: ").append(oneLine(v.difference()));
            }
            out.append('\n');
        }
        long identical = verifications.stream().filter(PartitionVerification::identical).count();
        return out.append(identical).append(" of ").append(verifications.size()).append(" partition(s) identical.\n").toString();
    }

    /**
     * An integrity check as JSON: {@code identical} for all, and a {@code partitions} array with one object per partition;
     * {@code first_difference_offset} and {@code difference} are null when the partition is identical.
     */
    public static String verifyJson(List<PartitionVerification> verifications) {
        ObjectNode root = root().put("identical", verifications.stream().allMatch(PartitionVerification::identical));
        ArrayNode partitions = root.putArray("partitions");
        for (PartitionVerification v : verifications) {
            ObjectNode node = partitions.addObject()
                .put("topic", v.topic())
                .put("partition", v.partition())
                .put("state", v.state().name());
            putKnown(node, "verified_from", v.verifiedFrom());
            putKnown(node, "verified_to", v.verifiedTo());
            node.put("identical", v.identical());
            putKnown(node, "first_difference_offset", v.firstDifferenceOffset());
            node.put("difference", v.difference());
            node.put("batches", v.batches());
            node.put("bytes", v.bytes());
        }
        return json(root);
    }

    private static String oneLine(String text) {
        return text.replaceAll("\\s+", " ");
    }

    /** Left-aligned columns two spaces apart; the last column is not padded (it may be free text). */
    private static <R> String table(List<Column<R>> columns, List<R> rows) {
        List<List<String>> cells = new ArrayList<>();
        cells.add(columns.stream().map(Column::header).collect(Collectors.toList()));
        for (R row : rows) {
            cells.add(columns.stream().map(c -> c.value().apply(row))
                .collect(Collectors.toList()));
        }
        int[] widths = new int[columns.size()];
        cells.forEach(line -> {
            for (int i = 0; i < widths.length; i++) {
                widths[i] = Math.max(widths[i], line.get(i).length());
            }
        });
        StringBuilder out = new StringBuilder();
        for (List<String> line : cells) {
            for (int i = 0; i < line.size(); i++) {
                boolean last = i == line.size() - 1;
                out.append(last ? line.get(i) : String.format("%-" + widths[i] + "s  ", line.get(i)));
            }
            out.append('\n');
        }
        return out.toString();
    }

    /**
     * One line per topic with the command that last changed it, under the table; nothing if no topic has one. The
     * full record of each command, with its result, is in {@code __mirror_commands} under its id.
     */
    /** The source's topic changes held back, one line each, with when each applies and how to decide on it. */
    private static String heldTopicChanges(List<MirrorTopicDescription> topics) {
        if (topics.stream().allMatch(t -> t.heldChanges().isEmpty())) {
            return "";
        }
        StringBuilder out = new StringBuilder("Held source changes (--apply-held applies them now, --reject-held keeps the destination as it is):\n");
        for (MirrorTopicDescription t : topics) {
            for (HeldTopicChange c : t.heldChanges()) {
                out.append("  ").append(t.topic()).append(": ").append(c.change()).append(", seen at ")
                    .append(Instant.ofEpochMilli(c.sinceMs())).append(", ")
                    .append(c.appliesAtMs() < 0 ? c.status() : "applies at " + Instant.ofEpochMilli(c.appliesAtMs())).append('\n');
            }
        }
        return out.toString();
    }

    private static String lastCommands(List<MirrorTopicDescription> topics) {
        List<MirrorTopicDescription> changed = topics.stream().filter(t -> t.lastCommand() != null).collect(Collectors.toList());
        if (changed.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder("Last command per topic:\n");
        for (MirrorTopicDescription t : changed) {
            MirrorTopicDescription.Command c = t.lastCommand();
            out.append("  ").append(t.topic()).append(": ").append(c.operation()).append(" at ")
                .append(Instant.ofEpochMilli(c.appliedMs())).append(" (id ").append(c.commandId()).append("): ")
                .append(c.result().replaceAll("\\s+", " ")).append('\n');
        }
        return out.toString();
    }

    private static void addIfAnyRow(List<Column<Row>> columns, List<Row> rows, Column<Row> column, Predicate<Row> set) {
        if (rows.stream().anyMatch(set)) {
            columns.add(column);
        }
    }

    private static String known(long value) {
        return value < 0 ? NONE : String.valueOf(value);
    }

    private static void putKnown(ObjectNode node, String field, long value) {
        if (value < 0) {
            node.putNull(field);
        } else {
            node.put(field, value);
        }
    }

    private static ObjectNode root() {
        return MAPPER.createObjectNode().put("version", JSON_VERSION);
    }

    private static String json(ObjectNode root) {
        try {
            return MAPPER.writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private record Row(String topic, MirrorPartitionDescription partition) {
    }

    private record Column<R>(String header, Function<R, String> value) {
    }
}
