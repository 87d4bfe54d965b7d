package io.clustermirror.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Summary of repeated runs of one scenario. {@link #aggregate} folds the result maps of the runs into one map of
 * the same shape: every number becomes the median over the runs that have it, and each map with numbers gains a
 * {@code spread} map ({@code min}, {@code max}, {@code n} per number), so readers of a single run's map (the
 * report, the chart, the ratios) read medians. Booleans are and-ed (an integrity check holds only if it held in
 * every run); other values are taken from the first run that has them.
 */
final class Stats {
    static final String SPREAD = "spread";

    private Stats() {
    }

    static double median(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("median of no values");
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int mid = v.length / 2;
        return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> aggregate(List<Map<String, Object>> runs) {
        Set<String> keys = new LinkedHashSet<>();
        runs.forEach(r -> keys.addAll(r.keySet()));
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> spread = new LinkedHashMap<>();
        for (String key : keys) {
            List<Object> values = new ArrayList<>();
            for (Map<String, Object> r : runs) {
                if (r.get(key) != null) {
                    values.add(r.get(key));
                }
            }
            if (values.isEmpty() || key.equals(SPREAD)) {
                continue;
            }
            if (values.stream().allMatch(v -> v instanceof Number)) {
                double[] d = values.stream().mapToDouble(v -> ((Number) v).doubleValue()).toArray();
                out.put(key, Bench.round(median(d)));
                Map<String, Object> s = new LinkedHashMap<>();
                s.put("min", Bench.round(Arrays.stream(d).min().orElseThrow()));
                s.put("max", Bench.round(Arrays.stream(d).max().orElseThrow()));
                s.put("n", d.length);
                spread.put(key, s);
            } else if (values.stream().allMatch(v -> v instanceof Map)) {
                List<Map<String, Object>> maps = new ArrayList<>();
                values.forEach(v -> maps.add((Map<String, Object>) v));
                out.put(key, aggregate(maps));
            } else if (values.stream().allMatch(v -> v instanceof Boolean)) {
                out.put(key, values.stream().allMatch(Boolean.TRUE::equals));
            } else {
                out.put(key, values.get(0));
            }
        }
        if (!spread.isEmpty()) {
            out.put(SPREAD, spread);
        }
        return out;
    }
}
