package io.clustermirror.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.testkit.MirrorTestCluster;
import io.prometheus.jmx.JmxCollector;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.test.TestUtils;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The monitoring files shipped under {@code config/monitoring} and the metrics table of docs/monitoring.md against what a running
 * destination broker exports: scraped through the Prometheus JMX exporter's own collector with the shipped rules, every
 * rule yields a metric, every metric the Grafana dashboard queries exists, and the docs name exactly the broker's
 * {@code cluster-mirror} attributes. The destination runs one broker, so its MBeans are the only ones of the group in
 * this JVM.
 */
@MirrorClusterTest(source = "monitoring-source", destination = "monitoring-destination")
class MonitoringConfigTest {
    private static final String TOPIC = "monitored";
    private static final int RECORDS = 20;
    private static final Path CHECKOUT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Path RULES = CHECKOUT.resolve("config/monitoring/prometheus-jmx-exporter.yml");
    private static final Path DASHBOARD = CHECKOUT.resolve("config/monitoring/grafana-dashboard.json");
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})? (\\S+)", Pattern.MULTILINE);

    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    private static String scrape;

    @BeforeAll
    static void mirrorATopicAndScrape() throws Exception {
        source = clusters.source;
        destination = clusters.destination;
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(TOPIC, 1, (short) 1)));
        }
        Workloads.writeAllKinds(source.bootstrapServers(), TOPIC, 1, RECORDS / 4);
        clusters.mirrors.createClusterMirror("mon", MirrorAssertions.mirrorConfig(source)).all().get();
        clusters.mirrors.startMirrorTopics("mon", List.of(TOPIC), List.of()).topics().get();
        MirrorAssertions.awaitCaughtUp(source, destination, TOPIC, 1);
        // The per-source-broker bytes appear with the first fetch, the lag once the fetcher saw the source's end.
        TestUtils.waitForCondition(() -> {
            scrape = scrape();
            return sampleValue("cluster_mirror_source_broker_bytes_fetched_total") > 0
                && sampleValue("cluster_mirror_partition_records_lag") == 0;
        }, 60_000, () -> "the mirror's metrics never showed the caught-up partition; last scrape:\n" + scrape);
    }

    @Test
    void everyExporterRuleMatchesAMetricTheBrokerExports() throws Exception {
        List<String> missing = new ArrayList<>();
        for (String name : ruleNames()) {
            if (!sampleNames().contains(name)) {
                missing.add(name);
            }
        }
        assertTrue(missing.isEmpty(), "rules that matched nothing: " + missing + "\nscrape:\n" + scrape);
    }

    @Test
    void theScrapedValuesAreTheMirrorsState() throws Exception {
        long endOffset;
        try (Admin admin = destination.admin()) {
            endOffset = MirrorAssertions.endOffset(admin, new TopicPartition(TOPIC, 0));
        }
        assertEquals(endOffset - 1, sampleValue("cluster_mirror_partition_last_mirrored_offset"), scrape);
        assertEquals(1, sampleValue("cluster_mirror_partitions"), scrape);
        assertTrue(sampleValue("cluster_mirror_records_appended_total") >= RECORDS, scrape);
        assertEquals(0, sampleValue("cluster_mirror_partitions_failed_total"), scrape);
        assertEquals(0, sampleValue("cluster_mirror_fenced_topics"), scrape);
        assertTrue(scrape.contains("cluster_mirror_thread_healthy{thread=\"partitions-"), scrape);
    }

    @Test
    void everyMetricTheDashboardQueriesIsExported() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        Set<String> queried = new TreeSet<>();
        Pattern metric = Pattern.compile("cluster_mirror_[a-z_]+");
        for (JsonNode expr : dashboard.findValues("expr")) {
            Matcher m = metric.matcher(expr.asText());
            while (m.find()) {
                queried.add(m.group());
            }
        }
        assertTrue(queried.size() >= 8, "the dashboard queries the mirror's metrics: " + queried);
        queried.removeAll(sampleNames());
        assertTrue(queried.isEmpty(), "the dashboard queries metrics the broker does not export: " + queried);
    }

    @Test
    void theDocsListExactlyTheBrokersMetrics() throws Exception {
        String guide = Files.readString(CHECKOUT.resolve("docs/monitoring.md"));
        int start = guide.indexOf("\n## Metrics");
        String section = guide.substring(start, guide.indexOf("\n## ", start + 1));
        Set<String> documented = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| [^|]+ \\| ([^|]+) \\|").matcher(section);
        while (row.find()) {
            Matcher attribute = Pattern.compile("`([a-z-]+)`").matcher(row.group(1));
            while (attribute.find()) {
                documented.add(attribute.group(1));
            }
        }
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<String> exported = new TreeSet<>();
        for (ObjectName name : server.queryNames(new ObjectName("kafka.server:type=cluster-mirror,*"), null)) {
            for (MBeanAttributeInfo attribute : server.getMBeanInfo(name).getAttributes()) {
                exported.add(attribute.getName());
            }
        }
        for (ObjectName name : server.queryNames(new ObjectName("kafka.server:type=cluster-mirror"), null)) {
            for (MBeanAttributeInfo attribute : server.getMBeanInfo(name).getAttributes()) {
                exported.add(attribute.getName());
            }
        }
        assertEquals(exported, documented, "the metrics table of docs/monitoring.md and the broker's cluster-mirror MBeans");
    }

    private static String scrape() throws Exception {
        // Registered as the exporter's agent does: the collector times its scrapes into the registry.
        PrometheusRegistry registry = new PrometheusRegistry();
        new JmxCollector(RULES.toFile()).register(registry);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    private static Set<String> sampleNames() {
        Set<String> names = new TreeSet<>();
        Matcher m = SAMPLE.matcher(scrape);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /** The value of the one sample of {@code name} (each has one here: one mirror, one topic, one source broker). */
    private static double sampleValue(String name) {
        Matcher m = SAMPLE.matcher(scrape);
        while (m.find()) {
            if (m.group(1).equals(name)) {
                return Double.parseDouble(m.group(3));
            }
        }
        return Double.NaN;
    }

    @SuppressWarnings("unchecked")
    private static List<String> ruleNames() throws Exception {
        Map<String, Object> config = new Yaml().load(Files.readString(RULES));
        List<String> names = new ArrayList<>();
        for (Map<String, Object> rule : (List<Map<String, Object>>) config.get("rules")) {
            names.add((String) rule.get("name"));
        }
        return names;
    }
}
