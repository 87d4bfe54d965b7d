package io.clustermirror.admin.cli;

import io.clustermirror.admin.AlterClusterMirrorConfigsOptions;
import io.clustermirror.admin.AlterClusterMirrorConfigsResult;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.ClusterMirrorListing;
import io.clustermirror.admin.CreateClusterMirrorOptions;
import io.clustermirror.admin.CreateClusterMirrorResult;
import io.clustermirror.admin.DeleteClusterMirrorOptions;
import io.clustermirror.admin.DeleteClusterMirrorResult;
import io.clustermirror.admin.DescribeClusterMirrorsOptions;
import io.clustermirror.admin.DescribeClusterMirrorsResult;
import io.clustermirror.admin.ListClusterMirrorsOptions;
import io.clustermirror.admin.ListClusterMirrorsResult;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.MirrorTopicsResult;
import io.clustermirror.admin.NotCaughtUpException;
import io.clustermirror.admin.OperationProgress;
import io.clustermirror.admin.PartitionCatchUp;
import io.clustermirror.admin.PartitionVerification;
import io.clustermirror.admin.PreviewStartResult;
import io.clustermirror.admin.ProgressListener;
import io.clustermirror.admin.PreviewStopResult;
import io.clustermirror.admin.SplitTransaction;
import io.clustermirror.admin.StopTransactions;
import io.clustermirror.admin.StartPreview;
import io.clustermirror.admin.StopPreview;
import io.clustermirror.admin.VerifyMirrorTopicsResult;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.apache.kafka.common.utils.MockTime;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs the tool against an in-memory {@link ClusterMirrorAdmin} that records its calls. */
class ClusterMirrorsCommandTest {
    @TempDir
    Path dir;

    private final MockTime time = new MockTime();
    private final FakeAdmin admin = new FakeAdmin(time);
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private Properties clientProperties;
    /** Whether the tool runs as at a terminal: stdin and stdout are one. */
    private boolean onTerminal;

    private int run(String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", "dest:9092"));
        all.addAll(List.of(args));
        return ClusterMirrorsCommand.mainNoExit(all.toArray(new String[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
            props -> {
                clientProperties = props;
                return admin;
            }, onTerminal, time);
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    /** Answered before anything else, without a cluster or a --bootstrap-server; Kafka's own parser says the client version. */
    @Test
    void versionNamesClusterMirrorAndTheKafkaClient() {
        assertEquals(0, ClusterMirrorsCommand.mainNoExit(new String[] {"--version"}, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8), props -> admin, false, time));
        String line = out().trim();
        assertTrue(line.matches("Cluster Mirror \\d+\\.\\d+\\.\\d+(-SNAPSHOT)? \\(kafka-cluster-mirrors\\), Kafka clients .+"), line);
        assertTrue(line.endsWith("Kafka clients " + org.apache.kafka.common.utils.AppInfoParser.getVersion()), line);
        assertEquals("", err());
    }

    @Test
    void create() throws Exception {
        Path config = Files.writeString(dir.resolve("dr.properties"), "bootstrap.servers=src:9092\n");
        assertEquals(0, run("--create", "--mirror", "dr", "--mirror-config", config.toString(), "--timeout-ms", "7"));
        assertEquals("Created cluster mirror 'dr'.\n", out());
        assertEquals("", err());
        assertEquals(List.of("create dr {bootstrap.servers=src:9092} timeout=7"), admin.calls);
        assertEquals("dest:9092", clientProperties.get("bootstrap.servers"));
        assertTrue(admin.closed);
    }

    @Test
    void delete() {
        assertEquals(0, run("--delete", "--mirror", "dr"));
        assertEquals("Deleted cluster mirror 'dr'.\n", out());
        assertEquals(List.of("delete dr timeout=null"), admin.calls);
    }

    @Test
    void alterSendsEveryChangeAndPrintsOnlyTheirNames() throws Exception {
        Path credentials = Files.writeString(dir.resolve("credentials.properties"),
            "sasl.jaas.config=ScramLoginModule required username=\"m\" password=\"n3w\";\n");
        assertEquals(0, run("--alter", "--mirror", "dr", "--add-config",
            "bootstrap.servers=[src3:9093,src4:9093],mirror.fetch.max.wait.ms=200", "--add-config-file", credentials.toString(),
            "--delete-config", "mirror.fetch.min.bytes", "--timeout-ms", "9"));
        assertEquals(List.of("alter dr SET bootstrap.servers=src3:9093,src4:9093, SET mirror.fetch.max.wait.ms=200, "
            + "SET sasl.jaas.config=ScramLoginModule required username=\"m\" password=\"n3w\";, DELETE mirror.fetch.min.bytes "
            + "timeout=9"), admin.calls);
        assertEquals("Altered cluster mirror 'dr'; set bootstrap.servers, mirror.fetch.max.wait.ms, sasl.jaas.config; "
            + "deleted mirror.fetch.min.bytes.\n", out());
        assertTrue(!out().contains("n3w") && err().isEmpty(), "a secret is never printed");
    }

    @Test
    void alterErrorsNameTheCause() {
        admin.failure = new ClusterMirrorException(MirrorError.INVALID_CONFIG, "unknown config 'mirror.fetch.max.byte'");
        assertEquals(1, run("--alter", "--mirror", "dr", "--add-config", "mirror.fetch.max.byte=1"));
        assertEquals("INVALID_CONFIG: unknown config 'mirror.fetch.max.byte'\n", err());
        err.reset();
        assertEquals(2, run("--alter", "--mirror", "dr"));
        assertTrue(err().startsWith("Error: --alter needs --add-config K=V,..., --add-config-file FILE or --delete-config K,...\n"),
            err());
        err.reset();
        assertEquals(2, run("--alter", "--mirror", "dr", "--add-config", "a=1", "--delete-config", "a"));
        assertTrue(err().startsWith("Error: config 'a' is both set and deleted; give it once"), err());
        err.reset();
        assertEquals(2, run("--alter", "--mirror", "dr", "--add-config", "=1"));
        assertTrue(err().startsWith("Error: --add-config takes key=value entries"), err());
        err.reset();
        assertEquals(2, run("--create", "--mirror", "dr", "--mirror-config", "x", "--delete-config", "a"));
        assertTrue(err().startsWith("Error: --delete-config cannot be used with --create"), err());
        assertEquals(1, admin.calls.size(), "usage errors send nothing");
    }

    @Test
    void topicActionsPrintTheTopicsTheControllerApplied() {
        admin.topics = List.of("orders", "payments-eu");
        assertEquals(0, run("--start", "--mirror", "dr", "--topics", "orders,payments-.*", "--exclude", "payments-us"));
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders"));
        assertEquals(0, run("--pause", "--mirror", "dr", "--topics", "orders"));
        assertEquals(0, run("--resume", "--mirror", "dr", "--topics", "orders"));
        assertEquals("Started mirroring 2 topics of mirror 'dr': orders, payments-eu\n"
            + "Stopped mirroring 2 topics of mirror 'dr': orders, payments-eu\n"
            + "Paused mirroring 2 topics of mirror 'dr': orders, payments-eu\n"
            + "Resumed mirroring 2 topics of mirror 'dr': orders, payments-eu\n", out());
        assertEquals(List.of("start dr [orders, payments-.*] - [payments-us]", "stop dr [orders] - []",
            "pause dr [orders] - []", "resume dr [orders] - []"), admin.calls);
        assertEquals(0, run("--start", "--mirror", "dr", "--topics", "orders", "--discard-local-writes"));
        assertEquals("start discarding local writes dr [orders] - []", admin.calls.get(admin.calls.size() - 1));
    }

    static final List<StopPreview> PREVIEWS = List.of(
        new StopPreview("orders", 0, PartitionState.MIRRORING, 120, 100, 100, 120, 15, List.of(7L, 9L), 4_200),
        new StopPreview("orders", 1, PartitionState.MIRRORING, 80, 80, -1, -1, 0, List.of()));

    /** Producer 7's transaction is committed on orders-0 and open on orders-1: a consistent stop cuts orders-0 at 95. */
    static final StopTransactions TRANSACTIONS = new StopTransactions(
        List.of(new SplitTransaction(7, (short) 3, List.of(new SplitTransaction.Part("orders", 0, 95, 99, 100, 5, 0),
            new SplitTransaction.Part("orders", 1, 80, 82, -1, 0, 3)))),
        List.of(new StopTransactions.ConsistentCut("orders", 0, 95, 100, 5), new StopTransactions.ConsistentCut("orders", 1, 80, 80, 0)),
        List.of("read from the destination's mirrored data only: a transaction none of whose records on a partition was mirrored "
            + "is not seen there"),
        List.of(new StopTransactions.GroupOffset("app", "orders-in", 0, 40, 2)), 1_000L, false);

    @Test
    void stopDryRunPrintsWhatTheStopWouldTruncateAndChangesNothing() throws Exception {
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders", "--dry-run"));
        assertEquals(List.of("preview-stop dr [orders] - []"), admin.calls, "only the preview ran, no stop");
        String text = out();
        assertTrue(text.contains("WOULD-TRUNCATE") && text.contains("[100,120)") && text.contains("7,9"), text);
        assertTrue(text.contains("LAG-MS") && text.contains("4200"), text);
        assertTrue(text.contains("Dry run, nothing changed: a stop now would truncate 15 record(s) in 1 of 2 partition(s).\n"), text);
        assertTrue(text.contains("Split transactions: a plain stop now would split 1 committed transaction(s)"), text);
        assertTrue(text.contains("producer 7 epoch 3: orders-0 keeps 5 of 5 record(s) [95..99], commit at 100; orders-1 keeps 0 of 3 "
            + "record(s) [80..82], commit not mirrored"), text);
        assertTrue(text.contains("A consistent stop (--stop --consistent) would cut 5 record(s) more than a plain stop, on 1 "
            + "partition(s): orders-0 at 95 (not 100)."), text);
        assertTrue(text.contains("A consistent stop would give 1 offset(s) of groups that commit in transactions, the last transaction "
            + "kept's: 'app' orders-in-0 at 40 (2 later commit(s) cut).\n"), text);
        assertTrue(text.endsWith("Not seen: read from the destination's mirrored data only: a transaction none of whose records on a "
            + "partition was mirrored is not seen there.\n"), text);
        out.reset();
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders", "--dry-run", "--json"));
        com.fasterxml.jackson.databind.JsonNode partitions = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out()).get("partitions");
        assertEquals(100, partitions.get(0).get("truncate_from").asLong());
        assertEquals(120, partitions.get(0).get("truncate_to").asLong());
        assertEquals(15, partitions.get(0).get("records_to_truncate").asLong());
        assertEquals("[7,9]", partitions.get(0).get("open_producer_ids").toString());
        assertTrue(partitions.get(1).get("truncate_from").isNull());
        assertEquals(4_200, partitions.get(0).get("lag_ms").asLong(), "how old the records a stop now leaves behind are");
        assertTrue(partitions.get(1).get("lag_ms").isNull(), "unknown");
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out());
        assertEquals(7, json.get("split_transactions").get(0).get("producer_id").asLong());
        assertEquals(3, json.get("split_transactions").get(0).get("parts").get(1).get("removed_records").asLong());
        assertEquals(95, json.get("consistent_cuts").get(0).get("offset").asLong());
        assertEquals(5, json.get("extra_records").asLong());
        assertEquals(1, json.get("limits").size());
        assertEquals(false, json.get("source_log_current").asBoolean());
        assertEquals(1_000L, json.get("source_log_read_up_to_ms").asLong(), "up to when the source's coordinator logs were read");
        assertEquals("{\"group\":\"app\",\"topic\":\"orders-in\",\"partition\":0,\"offset\":40,\"commits_cut\":2}",
            json.get("group_offsets").get(0).toString());
        out.reset();
        assertEquals(2, run("--stop", "--mirror", "dr", "--topics", "orders", "--json"));
        assertTrue(err().contains("--json with --stop needs --dry-run"), err());
    }

    @Test
    void plannedStopWaitsThroughTheClientAndPrintsWhatStopped() throws Exception {
        admin.topics = List.of("orders");
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders", "--planned", "--timeout-ms", "5000",
            "--source-bootstrap-server", "src:9093"));
        assertEquals(List.of("stop planned timeout=5000 source=src:9093 dr [orders] - []"), admin.calls);
        assertEquals("Stopped mirroring 1 topic of mirror 'dr': orders\n", out());
        out.reset();
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders", "--planned", "--json"));
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out());
        assertEquals(true, root.get("stopped").asBoolean());
        assertEquals("[\"orders\"]", root.get("topics").toString());
    }

    @Test
    void consistentStopStopsWithTheClientsCutsAndPrintsWhatItCut() throws Exception {
        admin.topics = List.of("orders");
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders", "--consistent"));
        assertEquals(List.of("stop consistent dr [orders] - []"), admin.calls);
        String text = out();
        assertTrue(text.startsWith("Stopped mirroring 1 topic of mirror 'dr': orders\n"), text);
        assertTrue(text.contains("Split transactions: a plain stop would have split 1 committed transaction(s)"), text);
        assertTrue(text.contains("The consistent stop cuts 5 record(s) more than a plain stop, on 1 partition(s): orders-0 at 95 (not 100)."),
            text);
        out.reset();
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders", "--consistent", "--json"));
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out());
        assertEquals("[\"orders\"]", root.get("topics").toString());
        assertEquals(5, root.get("extra_records").asLong());
        assertEquals(2, run("--stop", "--mirror", "dr", "--topics", "orders", "--consistent", "--planned"));
        assertTrue(err().contains("--consistent cannot be used with --planned: a planned stop is consistent already"), err());
        assertEquals(2, run("--stop", "--mirror", "dr", "--topics", "orders", "--consistent", "--dry-run"));
        assertTrue(err().contains("--consistent cannot be used with --dry-run"), err());
        assertEquals(2, run("--start", "--mirror", "dr", "--topics", "orders", "--consistent"));
        assertTrue(err().contains("--consistent cannot be used with --start"), err());
    }

    @Test
    void plannedStopThatTimesOutNamesThePartitionsBehindAndExitsOne() throws Exception {
        admin.failure = new NotCaughtUpException(List.of(
            new PartitionCatchUp("orders", 1, PartitionState.MIRRORING, 500, 504, 500, 500, 1200)), 5000);
        assertEquals(1, run("--stop", "--mirror", "dr", "--topics", "orders", "--planned", "--json"));
        assertTrue(err().startsWith("MIRROR_TOPIC_NOT_CAUGHT_UP: 1 partition(s) had not caught up with the source after 5000 ms, "
            + "so nothing was stopped: orders-1 (MIRRORING): 4 offset(s) and 1200 ms behind"), err());
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out());
        assertEquals(false, root.get("stopped").asBoolean());
        com.fasterxml.jackson.databind.JsonNode behind = root.get("partitions_behind").get(0);
        assertEquals(1, behind.get("partition").asInt());
        assertEquals(4, behind.get("lag").asLong());
        assertEquals(1200, behind.get("lag_ms").asLong());
        assertEquals(504, behind.get("source_end").asLong());
        assertEquals(500, behind.get("destination_end").asLong());
        assertEquals(true, behind.get("source_transaction_open").asBoolean());
    }

    @Test
    void plannedGoesOnlyWithAStopThatIsNotADryRun() {
        assertEquals(2, run("--stop", "--mirror", "dr", "--topics", "orders", "--planned", "--dry-run"));
        assertTrue(err().contains("--planned cannot be used with --dry-run"), err());
        assertEquals(2, run("--start", "--mirror", "dr", "--topics", "orders", "--planned"));
        assertTrue(err().contains("--planned cannot be used with --start"), err());
        assertEquals(2, run("--stop", "--mirror", "dr", "--topics", "orders", "--source-bootstrap-server", "src:9092"));
        assertTrue(err().contains("--source-bootstrap-server with --stop needs --planned"), err());
        assertEquals(List.of(), admin.calls);
    }

    static final List<StartPreview> START_PREVIEWS = List.of(
        new StartPreview("orders", 0, PartitionState.STOPPED, 100, -1, 131, StartPreview.Cut.BARRIER, 100, 131, 30),
        new StartPreview("orders", 1, PartitionState.STOPPED, 80, -1, 81, StartPreview.Cut.BARRIER, 80, 81, 0));

    @Test
    void startDryRunPrintsWhatTheStartWouldTruncateAndChangesNothing() throws Exception {
        assertEquals(0, run("--start", "--mirror", "dr", "--topics", "orders", "--dry-run", "--source-bootstrap-server", "src:9093"));
        assertEquals(List.of("preview-start dr [orders] - [] source=src:9093"), admin.calls, "only the preview ran, no start");
        String text = out();
        assertTrue(text.contains("WOULD-TRUNCATE") && text.contains("[100,131)") && text.contains("BARRIER"), text);
        assertTrue(text.endsWith("Dry run, nothing changed: a start now would truncate 30 record(s) in 2 of 2 partition(s); "
            + "it needs --discard-local-writes.\n"), text);
        out.reset();
        assertEquals(0, run("--start", "--mirror", "dr", "--topics", "orders", "--dry-run", "--json"));
        com.fasterxml.jackson.databind.JsonNode partition = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out())
            .get("partitions").get(0);
        assertEquals("orders", partition.get("topic").asText());
        assertEquals(0, partition.get("partition").asInt());
        assertEquals(100, partition.get("truncate_from").asLong());
        assertEquals(131, partition.get("truncate_to").asLong());
        assertEquals(30, partition.get("records_to_truncate").asLong());
        assertEquals("BARRIER", partition.get("cut").asText());
        out.reset();
        assertEquals(2, run("--start", "--mirror", "dr", "--topics", "orders", "--json"));
        assertTrue(err().contains("--json with --start needs --dry-run"), err());
        assertEquals(2, run("--start", "--mirror", "dr", "--topics", "orders", "--dry-run", "--discard-local-writes"));
        assertTrue(err().contains("--discard-local-writes cannot be used with --dry-run"), err());
    }

    static final PartitionVerification IDENTICAL =
        new PartitionVerification("orders", 0, PartitionState.MIRRORING, 10, 120, true, -1, null, 12, 4096);
    static final PartitionVerification DIFFERS = new PartitionVerification("orders", 1, PartitionState.STOPPED, 0, 80, false, 57,
        "destination batch [57, 59] fails its CRC check", 5, 2048);

    @Test
    void verifyPrintsEachPartitionAndExitsZeroOnlyIfAllAreIdentical() throws Exception {
        Path sourceConfig = Files.writeString(dir.resolve("source.properties"),
            "security.protocol=SASL_SSL\nsasl.jaas.config=PlainLoginModule required password=\"s3cret\";\n");
        admin.verifications = List.of(IDENTICAL);
        assertEquals(0, run("--verify", "--mirror", "dr", "--source-command-config", sourceConfig.toString(),
            "--source-bootstrap-server", "src:9093"));
        assertEquals(List.of("verify dr [] - [] source bootstrap=src:9093 protocol=SASL_SSL"), admin.calls);
        assertTrue(out().startsWith("orders-0  IDENTICAL [10, 120)"), out());

        out.reset();
        admin.verifications = List.of(IDENTICAL, DIFFERS);
        assertEquals(1, run("--verify", "--mirror", "dr", "--topics", "orders", "--source-command-config", sourceConfig.toString()));
        String text = out();
        assertTrue(text.contains("orders-1  DIFFERS at offset 57: destination batch [57, 59] fails its CRC check")
            && text.contains("1 of 2 partition(s) identical."), text);
        assertTrue(!text.contains("s3cret") && !err().contains("s3cret"), "the source's secrets are never printed");
        out.reset();

        assertEquals(1, run("--verify", "--mirror", "dr", "--json"));
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out());
        assertEquals(false, root.get("identical").asBoolean());
        com.fasterxml.jackson.databind.JsonNode differs = root.get("partitions").get(1);
        assertEquals("orders", differs.get("topic").asText());
        assertEquals(1, differs.get("partition").asInt());
        assertEquals(0, differs.get("verified_from").asLong());
        assertEquals(80, differs.get("verified_to").asLong());
        assertEquals(false, differs.get("identical").asBoolean());
        assertEquals(57, differs.get("first_difference_offset").asLong());
        assertTrue(root.get("partitions").get(0).get("first_difference_offset").isNull());

        assertEquals(2, run("--verify", "--mirror", "dr", "--dry-run"));
        assertTrue(err().contains("--dry-run cannot be used with --verify"), err());
        assertEquals(2, run("--describe", "--source-bootstrap-server", "src:9092"));
    }

    /** Two partitions catching up, 100 offsets behind, then 40, then none: a second apart. */
    static final List<OperationProgress> CATCHING_UP = List.of(new OperationProgress(0, 2, 100), new OperationProgress(1, 2, 40),
        new OperationProgress(2, 2, 0));

    @Test
    void startWaitWaitsThroughTheClientWithProgressInPlaceOnATerminal() {
        onTerminal = true;
        admin.topics = List.of("orders");
        admin.progress = CATCHING_UP;
        assertEquals(0, run("--start", "--mirror", "dr", "--topics", "orders", "--wait", "--timeout-ms", "5000",
            "--source-bootstrap-server", "src:9093"));
        assertEquals(List.of("start waiting timeout=5000 source=src:9093 dr [orders] - []"), admin.calls);
        assertEquals("Started mirroring 1 topic of mirror 'dr': orders\n"
            + "Every partition of them is MIRRORING and has caught up with the source.\n", out());
        String first = "Catching up: 0/2 partitions, 100 offsets behind, ETA unknown, elapsed 0s";
        String second = "Catching up: 1/2 partitions, 40 offsets behind, ETA 1s, elapsed 1s";
        String last = "Catching up: 2/2 partitions, 0 offsets behind, ETA 0s, elapsed 2s";
        // Each report redraws the line in place, padded over the longer one before it; the end clears it.
        assertEquals("\r" + first + "\r" + second + " ".repeat(first.length() - second.length()) + "\r" + last
            + " ".repeat(first.length() - last.length()) + "\r" + " ".repeat(first.length()) + "\r", err());
    }

    @Test
    void progressThroughAPipeIsAPlainLineEveryTenSecondsAtMost() {
        admin.topics = List.of("orders");
        admin.progress = CATCHING_UP;
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders", "--planned"));
        assertEquals("", err(), "quiet when the operation takes less than ten seconds");
        out.reset();
        List<OperationProgress> slow = new ArrayList<>();
        for (int left = 12; left >= 0; left--) {
            slow.add(new OperationProgress(left == 0 ? 1 : 0, 1, left * 10L));
        }
        admin.progress = slow;
        admin.verifications = List.of(IDENTICAL);
        assertEquals(0, run("--verify", "--mirror", "dr"));
        assertEquals("Verifying: 0/1 partitions, 20 offsets to compare, ETA 2s, elapsed 10s\n", err());
        assertTrue(out().startsWith("orders-0  IDENTICAL"), out());
    }

    @Test
    void jsonOutputGetsNoProgressEvenOnATerminal() throws Exception {
        onTerminal = true;
        admin.progress = CATCHING_UP;
        admin.verifications = List.of(IDENTICAL);
        assertEquals(0, run("--verify", "--mirror", "dr", "--json"));
        assertEquals("", err());
        assertTrue(new com.fasterxml.jackson.databind.ObjectMapper().readTree(out()).get("identical").asBoolean(), out());
        out.reset();
        admin.topics = List.of("orders");
        assertEquals(0, run("--stop", "--mirror", "dr", "--topics", "orders", "--planned", "--json"));
        assertEquals("", err());
        assertEquals("[\"orders\"]", new com.fasterxml.jackson.databind.ObjectMapper().readTree(out()).get("topics").toString());
    }

    @Test
    void startWaitThatTimesOutClearsTheProgressAndNamesThePartitionsNotCaughtUp() {
        onTerminal = true;
        admin.progress = CATCHING_UP.subList(0, 1);
        admin.failure = NotCaughtUpException.afterStart(List.of(
            new PartitionCatchUp("orders", 0, PartitionState.MIRRORING, 500, 504, 490, 490, 1200),
            new PartitionCatchUp("orders", 1, PartitionState.PREPARING, 0, 0, 0, 0, -1)), 5000);
        assertEquals(1, run("--start", "--mirror", "dr", "--topics", "orders", "--wait", "--timeout-ms", "5000"));
        String error = err().substring(err().lastIndexOf('\r') + 1);
        assertEquals("MIRROR_TOPIC_NOT_CAUGHT_UP: 2 partition(s) had not caught up with the source after 5000 ms; the topics were "
            + "started and go on mirroring: orders-0 (MIRRORING): 14 offset(s) and 1200 ms behind (source last stable offset 500, "
            + "end 504; destination last stable offset 490, end 490); a transaction is open on the source from offset 500: end "
            + "it (commit, abort, or wait for its transaction.timeout.ms); orders-1 (PREPARING): caught up but not MIRRORING yet. "
            + "Follow them with --describe, or wait with a longer --timeout-ms\n", error);
        assertEquals("", out());
    }

    @Test
    void waitGoesOnlyWithAStartThatIsNotADryRun() {
        assertEquals(2, run("--start", "--mirror", "dr", "--topics", "orders", "--wait", "--dry-run"));
        assertTrue(err().contains("--wait cannot be used with --dry-run"), err());
        assertEquals(2, run("--stop", "--mirror", "dr", "--topics", "orders", "--wait"));
        assertTrue(err().contains("--wait cannot be used with --stop"), err());
        assertEquals(2, run("--start", "--mirror", "dr", "--topics", "orders", "--source-bootstrap-server", "src:9092"));
        assertTrue(err().contains("--source-bootstrap-server with --start needs --dry-run or --wait"), err());
        assertEquals(2, run("--start", "--mirror", "dr", "--topics", "orders", "--wait", "--json"));
        assertTrue(err().contains("--json with --start needs --dry-run"), err());
        assertEquals(List.of(), admin.calls);
    }

    @Test
    void listAndDescribe() {
        assertEquals(0, run("--list"));
        assertEquals(OutputFormatter.listText(admin.listings), out());
        out.reset();
        assertEquals(0, run("--list", "--json"));
        assertEquals(OutputFormatter.listJson(admin.listings), out());
        out.reset();
        assertEquals(0, run("--describe", "--mirror", "dr"));
        assertEquals(OutputFormatter.describeTable(List.of(OutputFormatterTest.DR_DESCRIPTION)), out());
        out.reset();
        assertEquals(0, run("--describe", "--mirror", "dr", "--json"));
        assertEquals(OutputFormatter.describeJson(List.of(OutputFormatterTest.DR_DESCRIPTION)), out());
    }

    @Test
    void describeWithTransactionsShowsWhatAPlainStopOfEveryMirroringTopicWouldSplitNow() throws Exception {
        assertEquals(0, run("--describe", "--mirror", "dr", "--transactions"));
        assertEquals(List.of("describe with transactions [dr]"), admin.calls);
        assertTrue(out().startsWith(OutputFormatter.describeTable(List.of(OutputFormatterTest.DR_DESCRIPTION))), out());
        assertTrue(out().contains("Transactions, if all the mirror's mirroring topics were stopped now:\n"
            + "Split transactions: a plain stop now would split 1 committed transaction(s)"), out());
        assertTrue(out().contains("A consistent stop (--stop --consistent) would cut 5 record(s) more than a plain stop"), out());
        out.reset();
        assertEquals(0, run("--describe", "--mirror", "dr", "--transactions", "--json"));
        com.fasterxml.jackson.databind.JsonNode transactions = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out())
            .get("mirrors").get(0).get("transactions");
        assertEquals(1, transactions.get("split_transactions").size(), out());
        assertEquals(5, transactions.get("extra_records").asLong(), out());
        out.reset();
        assertEquals(0, run("--describe", "--mirror", "dr", "--json"));
        assertEquals(null, new com.fasterxml.jackson.databind.ObjectMapper().readTree(out()).get("mirrors").get(0).get("transactions"),
            "a plain describe reads no partition's tail");
        assertEquals(2, run("--list", "--transactions"));
        assertTrue(err().contains("--transactions cannot be used with --list"), err());
    }

    @Test
    void describeWithoutMirrorDescribesEveryMirror() {
        assertEquals(0, run("--describe"));
        assertEquals(OutputFormatter.describeTable(
            List.of(OutputFormatterTest.DR_DESCRIPTION, OutputFormatterTest.EMPTY_DESCRIPTION)), out());
        assertEquals(List.of("list", "describe [dr, empty]"), admin.calls);
    }

    @Test
    void operationErrorIsOneLineAndExitOne() {
        assertEquals(1, run("--describe", "--mirror", "nope"));
        assertEquals("UNKNOWN_CLUSTER_MIRROR: no mirror named 'nope'\n", err());
        assertEquals("", out());

        err.reset();
        admin.failure = new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_PAUSED, "topic 'a' is MIRRORING;\n"
            + "pause it first");
        assertEquals(1, run("--resume", "--mirror", "dr", "--topics", "a"));
        assertEquals("MIRROR_TOPIC_NOT_PAUSED: topic 'a' is MIRRORING; pause it first\n", err());
    }

    @Test
    void usageErrorIsCauseAndUsageAndExitTwo() {
        assertEquals(2, run("--start", "--mirror", "dr"));
        assertEquals("Error: --start needs --topics CSV\n" + Action.START.usage() + "\n", err());
        assertEquals(List.of(), admin.calls);
    }

    @Test
    void helpGoesToStdoutAndExitsZero() {
        assertEquals(0, run("--start", "--help"));
        assertEquals(CommandOptions.helpText(), out());
        assertEquals("", err());
    }

    @Test
    void clientFailuresAreReportedByTheirRootCause() {
        assertEquals("INVALID_CONFIG: No resolvable bootstrap urls given in bootstrap.servers",
            ClusterMirrorsCommand.errorLine(new KafkaException("Failed to create new KafkaAdminClient",
                new ConfigException("No resolvable bootstrap urls given in bootstrap.servers"))));
        assertEquals("UNKNOWN_SERVER_ERROR: IllegalStateException: boom",
            ClusterMirrorsCommand.errorLine(new ExecutionException(new IllegalStateException("boom"))));
        assertEquals("UNKNOWN_CLUSTER_MIRROR: no mirror named 'dr'",
            ClusterMirrorsCommand.errorLine(new ExecutionException(
                new ClusterMirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named 'dr'"))));
    }

    /**
     * Answers from fixed data: mirrors "dr" and "empty"; fails every topic operation with {@link #failure} if set. The
     * long operations (a start that waits, a planned stop, a check) report {@link #progress} to their listener first, a
     * second apart on the test's clock.
     */
    private static final class FakeAdmin implements ClusterMirrorAdmin {
        final MockTime time;
        final List<String> calls = new ArrayList<>();
        List<OperationProgress> progress = List.of();
        final List<ClusterMirrorListing> listings = List.of(OutputFormatterTest.DR, OutputFormatterTest.EMPTY);
        final Map<String, ClusterMirrorDescription> descriptions = Map.of(
            "dr", OutputFormatterTest.DR_DESCRIPTION, "empty", OutputFormatterTest.EMPTY_DESCRIPTION);
        List<String> topics = List.of();
        List<PartitionVerification> verifications = List.of();
        ClusterMirrorException failure;
        boolean closed;

        FakeAdmin(MockTime time) {
            this.time = time;
        }

        private void report(ProgressListener listener) {
            for (int i = 0; i < progress.size(); i++) {
                time.sleep(i == 0 ? 0 : 1000);
                listener.onProgress(progress.get(i));
            }
        }

        @Override
        public CreateClusterMirrorResult createClusterMirror(String name, Map<String, String> configs,
                                                             CreateClusterMirrorOptions options) {
            calls.add("create " + name + " " + configs + " timeout=" + options.timeoutMs());
            return new CreateClusterMirrorResult(KafkaFuture.completedFuture(null));
        }

        @Override
        public AlterClusterMirrorConfigsResult alterClusterMirrorConfigs(String name, Collection<AlterConfigOp> ops,
                                                                         AlterClusterMirrorConfigsOptions options) {
            calls.add("alter " + name + " " + ops.stream().map(op -> op.opType() + " " + op.configEntry().name()
                + (op.configEntry().value() == null ? "" : "=" + op.configEntry().value())).collect(Collectors.joining(", "))
                + " timeout=" + options.timeoutMs());
            return new AlterClusterMirrorConfigsResult(failure != null ? failed(failure) : KafkaFuture.completedFuture(null));
        }

        @Override
        public DeleteClusterMirrorResult deleteClusterMirror(String name, DeleteClusterMirrorOptions options) {
            calls.add("delete " + name + " timeout=" + options.timeoutMs());
            return new DeleteClusterMirrorResult(KafkaFuture.completedFuture(null));
        }

        @Override
        public ListClusterMirrorsResult listClusterMirrors(ListClusterMirrorsOptions options) {
            calls.add("list");
            return new ListClusterMirrorsResult(KafkaFuture.completedFuture(listings));
        }

        @Override
        public DescribeClusterMirrorsResult describeClusterMirrors(Collection<String> names,
                                                                   DescribeClusterMirrorsOptions options) {
            calls.add("describe " + (options.includeTransactions() ? "with transactions " : "") + names);
            Map<String, KafkaFuture<ClusterMirrorDescription>> futures = new LinkedHashMap<>();
            for (String name : names) {
                futures.put(name, descriptions.containsKey(name) ? KafkaFuture.completedFuture(options.includeTransactions()
                        ? descriptions.get(name).withTransactions(TRANSACTIONS) : descriptions.get(name))
                    : failed(new ClusterMirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR,
                        "no mirror named '" + name + "'")));
            }
            return new DescribeClusterMirrorsResult(futures);
        }

        @Override
        public MirrorTopicsResult startMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                    Collection<String> excludes, MirrorTopicsOptions options) {
            if (options.waitUntilCaughtUp()) {
                report(options.progressListener());
            }
            return topicOp("start" + (options.discardLocalWrites() ? " discarding local writes" : "") + (options.waitUntilCaughtUp()
                ? " waiting timeout=" + options.timeoutMs() + " source=" + options.sourceClientConfigs().getProperty("bootstrap.servers")
                : ""), mirror, topicsOrRegexes, excludes);
        }

        @Override
        public MirrorTopicsResult stopMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                   Collection<String> excludes, MirrorTopicsOptions options) {
            report(options.progressListener());
            if (options.consistent()) {
                return new MirrorTopicsResult(topicOp("stop consistent", mirror, topicsOrRegexes, excludes).topics(),
                    KafkaFuture.completedFuture(TRANSACTIONS));
            }
            return topicOp(options.planned() ? "stop planned timeout=" + options.timeoutMs() + " source="
                + options.sourceClientConfigs().getProperty("bootstrap.servers") : "stop", mirror, topicsOrRegexes, excludes);
        }

        @Override
        public MirrorTopicsResult pauseMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                    Collection<String> excludes, MirrorTopicsOptions options) {
            return topicOp("pause", mirror, topicsOrRegexes, excludes);
        }

        @Override
        public MirrorTopicsResult resumeMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                     Collection<String> excludes, MirrorTopicsOptions options) {
            return topicOp("resume", mirror, topicsOrRegexes, excludes);
        }

        @Override
        public MirrorTopicsResult recoverMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                      Collection<String> excludes, MirrorTopicsOptions options) {
            return topicOp("recover", mirror, topicsOrRegexes, excludes);
        }

        @Override
        public MirrorTopicsResult applyHeldChanges(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                   MirrorTopicsOptions options) {
            return topicOp("apply-held", mirror, topicsOrRegexes, excludes);
        }

        @Override
        public MirrorTopicsResult rejectHeldChanges(String mirror, Collection<String> topicsOrRegexes, Collection<String> excludes,
                                                    MirrorTopicsOptions options) {
            return topicOp("reject-held", mirror, topicsOrRegexes, excludes);
        }

        @Override
        public PreviewStopResult previewStopMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                         Collection<String> excludes, MirrorTopicsOptions options) {
            calls.add("preview-stop " + mirror + " " + topicsOrRegexes + " - " + excludes);
            return new PreviewStopResult(KafkaFuture.completedFuture(PREVIEWS), KafkaFuture.completedFuture(TRANSACTIONS));
        }

        @Override
        public PreviewStartResult previewStartMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                           Collection<String> excludes, MirrorTopicsOptions options) {
            calls.add("preview-start " + mirror + " " + topicsOrRegexes + " - " + excludes
                + (options.sourceClientConfigs().isEmpty() ? "" : " source=" + options.sourceClientConfigs().getProperty("bootstrap.servers")));
            return new PreviewStartResult(KafkaFuture.completedFuture(START_PREVIEWS));
        }

        @Override
        public VerifyMirrorTopicsResult verifyMirrorTopics(String mirror, Collection<String> topicsOrRegexes,
                                                           Collection<String> excludes, Properties sourceClientConfigs,
                                                           MirrorTopicsOptions options) {
            calls.add("verify " + mirror + " " + topicsOrRegexes + " - " + excludes + " source bootstrap="
                + sourceClientConfigs.getProperty("bootstrap.servers") + " protocol=" + sourceClientConfigs.getProperty("security.protocol"));
            report(options.progressListener());
            return new VerifyMirrorTopicsResult(KafkaFuture.completedFuture(verifications));
        }

        private MirrorTopicsResult topicOp(String op, String mirror, Collection<String> topicsOrRegexes,
                                           Collection<String> excludes) {
            calls.add(op + " " + mirror + " " + topicsOrRegexes + " - " + excludes);
            return new MirrorTopicsResult(failure != null ? failed(failure) : KafkaFuture.completedFuture(topics));
        }

        @Override
        public void close(Duration timeout) {
            closed = true;
        }

        private static <T> KafkaFuture<T> failed(Exception e) {
            KafkaFutureImpl<T> future = new KafkaFutureImpl<>();
            future.completeExceptionally(e);
            return future;
        }
    }
}
