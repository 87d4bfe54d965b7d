package io.clustermirror.bench;

import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.List;

/**
 * How the scale part lays out its partitions: {@code topics} topics of {@code partitionsPerTopic} partitions each.
 * Written {@code N} (one topic of N partitions, named {@code scale}) or {@code topics:TxP} (T topics of P partitions,
 * named {@code scale-0000} ...).
 *
 * @param topics             the number of topics, at least 1
 * @param partitionsPerTopic the partitions of each topic, at least 1
 */
record ScaleLayout(int topics, int partitionsPerTopic) {
    private static final String TOPICS_PREFIX = "topics:";

    ScaleLayout {
        if (topics < 1 || partitionsPerTopic < 1) {
            throw new IllegalArgumentException("a scale layout needs at least one topic of one partition, not "
                + topics + " topics of " + partitionsPerTopic);
        }
    }

    /** Parses {@code N} or {@code topics:TxP}; a bad one fails naming the accepted forms. */
    static ScaleLayout parse(String spec) {
        String s = spec.trim();
        try {
            if (s.startsWith(TOPICS_PREFIX)) {
                String[] tp = s.substring(TOPICS_PREFIX.length()).split("x", -1);
                if (tp.length == 2) {
                    return new ScaleLayout(Integer.parseInt(tp[0]), Integer.parseInt(tp[1]));
                }
            } else {
                return new ScaleLayout(1, Integer.parseInt(s));
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("bad scale layout '" + spec + "': write a partition count (e.g. 1000) "
            + "or topics:<topics>x<partitions per topic> (e.g. topics:1000x10)");
    }

    /** The layouts of a comma-separated list; blank entries (an empty option) are skipped. */
    static List<ScaleLayout> parseList(String specs) {
        List<ScaleLayout> out = new ArrayList<>();
        for (String s : specs.split(",")) {
            if (!s.isBlank()) {
                out.add(parse(s));
            }
        }
        return out;
    }

    int partitions() {
        return topics * partitionsPerTopic;
    }

    /** The topic names, in order. */
    List<String> topicNames() {
        if (topics == 1) {
            return List.of("scale");
        }
        List<String> names = new ArrayList<>(topics);
        String format = "scale-%0" + String.valueOf(topics - 1).length() + "d";
        for (int t = 0; t < topics; t++) {
            names.add(String.format(format, t));
        }
        return names;
    }

    /** Every partition of the layout, topic by topic. */
    List<TopicPartition> topicPartitions() {
        List<TopicPartition> out = new ArrayList<>(partitions());
        for (String topic : topicNames()) {
            for (int p = 0; p < partitionsPerTopic; p++) {
                out.add(new TopicPartition(topic, p));
            }
        }
        return out;
    }

    /** The key of the layout in results and reports: {@code 1000} or {@code 1000x10}. */
    @Override
    public String toString() {
        return topics == 1 ? String.valueOf(partitionsPerTopic) : topics + "x" + partitionsPerTopic;
    }
}
