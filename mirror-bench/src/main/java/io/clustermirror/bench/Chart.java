package io.clustermirror.bench;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A PNG with three bar panels (catch-up MB/s, CPU s/GiB, lag p99 ms) for mirror, MM2 and replication, or for the
 * scale part four panels of curves over its layouts.
 */
final class Chart {
    private static final String[] SYSTEMS = {"mirror", "mm2", "replication"};
    private static final String[] LABELS = {"cluster mirror", "MirrorMaker 2", "replication"};
    private static final Color[] COLORS = {new Color(0x2b6cb0), new Color(0xc05621), new Color(0x718096)};
    /** Colours of the line panels' series, the bar panels' three first. */
    private static final Color[] PALETTE = {COLORS[0], COLORS[1], COLORS[2], new Color(0x2f855a), new Color(0x805ad5),
        new Color(0xb7791f), new Color(0xc53030), new Color(0x319795)};
    /** Every panel's top edge, plot height and width, in pixels. */
    private static final int TOP = 60;
    private static final int HEIGHT = 280;
    private static final int WIDTH = 310;

    private Chart() {
    }

    static void write(Map<String, Object> r, Path file) throws IOException {
        if ("scale".equals(r.get("part"))) {
            writeScale(r, file);
            return;
        }
        BufferedImage img = new BufferedImage(1050, 420, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img, "Cluster Mirror benchmark, " + r.get("codec") + " (" + r.get("started_utc") + ")");
        panel(g, r, 20, "catch-up MB/s (higher is better)", "catch_up", "MBps");
        panel(g, r, 370, "CPU s per GiB copied (lower is better)", "catch_up", "cpu_s_per_GiB");
        panel(g, r, 720, "lag p99 ms at fixed rate (lower is better)", "lag", "p99_ms");
        legend(g, LABELS, COLORS);
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    /**
     * The scale part's curves over its layouts (in the order run, labelled with their partition counts): start and
     * stop times, idle CPU and heap of the mirror's destination against Kafka's follower, produce p99 without and with
     * the mirror partitions. Two series per panel: the first in the mirror's colour, the second in grey.
     */
    @SuppressWarnings("unchecked")
    private static void writeScale(Map<String, Object> r, Path file) throws IOException {
        List<Map<String, Object>> layouts = (List<Map<String, Object>>) r.get("layouts");
        BufferedImage img = new BufferedImage(1400, 420, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img, "Cluster Mirror scale benchmark (" + r.get("started_utc") + ")");
        curves(g, layouts, 20, "seconds (lower is better)", new String[] {"--start to caught up", "--stop to STOPPED"},
            new String[] {"mirror", "start", "seconds_to_caught_up"}, new String[] {"mirror", "stop", "seconds_to_stopped"});
        curves(g, layouts, 370, "idle CPU, millicores", new String[] {"mirror destination", "Kafka follower"},
            new String[] {"mirror", "idle", "millicores"}, new String[] {"replication", "idle", "millicores"});
        curves(g, layouts, 720, "heap after full GC, MiB", new String[] {"mirror destination", "Kafka follower"},
            new String[] {"mirror", "idle", "heap_after_full_gc_MiB"},
            new String[] {"replication", "idle", "heap_after_full_gc_MiB"});
        curves(g, layouts, 1070, "produce p99 ms (acks=all)", new String[] {"with mirror partitions", "without"},
            new String[] {"mirror", "produce_with_mirror", "produce_p99_ms"},
            new String[] {"mirror", "produce_without_mirror", "produce_p99_ms"});
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.drawString("x: partitions (topics x partitions per topic), in the order run; points: medians", 20, 406);
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    /**
     * The destination broker's heap after each GC during the catch-up, one line per mirror scenario that has the series
     * (the mirror on loopback, the links, the slow disk), over the seconds since the first GC of the catch-up. Writes
     * nothing if no scenario has one.
     */
    static void writeHeap(Map<String, Object> r, Path file) throws IOException {
        Map<String, List<List<Double>>> series = new LinkedHashMap<>();
        r.keySet().stream().filter(k -> k.equals("mirror") || Report.isLink(k)).sorted()
            .filter(k -> !heapSeries(r.get(k)).isEmpty()).forEach(k -> series.put(k, heapSeries(r.get(k))));
        if (series.isEmpty()) {
            return;
        }
        BufferedImage img = new BufferedImage(900, 420, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img, "Destination heap after each GC during the catch-up, " + r.get("codec") + " ("
            + r.get("started_utc") + ")");
        lines(g, 60, 600, "MiB over seconds", series);
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    /**
     * Lag percentiles over the measurement window, per second of due time, of every scenario with a lag probe (the
     * first repeat's): p50 and p99 side by side. Writes nothing if no scenario has them.
     */
    static void writeLag(Map<String, Object> r, Path file) throws IOException {
        Map<String, List<List<Double>>> p50 = new LinkedHashMap<>();
        Map<String, List<List<Double>>> p99 = new LinkedHashMap<>();
        r.forEach((k, scenario) -> {
            p50.put(k, lagSeries(scenario, "p50_ms"));
            p99.put(k, lagSeries(scenario, "p99_ms"));
        });
        p50.values().removeIf(List::isEmpty);
        p99.values().removeIf(List::isEmpty);
        if (p99.isEmpty()) {
            return;
        }
        BufferedImage img = new BufferedImage(1400, 420, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img, "Lag per second of the window, ms, " + r.get("codec") + " (" + r.get("started_utc") + ")");
        lines(g, 60, 420, "p50 ms over seconds", p50);
        lines(g, 760, 420, "p99 ms over seconds", p99);
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    /** A scenario's {@code lag.by_second.<percentile>} as {@code [second, ms]} pairs, seconds without records left out. */
    @SuppressWarnings("unchecked")
    static List<List<Double>> lagSeries(Object scenario, String percentile) {
        if (scenario instanceof Map<?, ?> m && m.get("lag") instanceof Map<?, ?> lag && lag.get("by_second") instanceof Map<?, ?> by
            && by.get(percentile) instanceof List<?> values) {
            List<List<Double>> series = new ArrayList<>();
            for (int i = 0; i < values.size(); i++) {
                double v = ((Number) values.get(i)).doubleValue();
                if (v >= 0) {
                    series.add(List.of((double) i, v));
                }
            }
            return series;
        }
        return List.of();
    }

    /**
     * A panel of lines over a shared x axis from 0: one per series, named in a legend to the right of the plot, which is
     * {@code plotW} wide from {@code left}.
     */
    private static void lines(Graphics2D g, int left, int plotW, String title, Map<String, List<List<Double>>> series) {
        double maxX = 1;
        double maxY = 1;
        for (List<List<Double>> points : series.values()) {
            for (List<Double> p : points) {
                maxX = Math.max(maxX, p.get(0));
                maxY = Math.max(maxY, p.get(1));
            }
        }
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.drawString(title, left, TOP - 10);
        g.setStroke(new BasicStroke(1));
        g.drawLine(left, TOP + HEIGHT, left + plotW, TOP + HEIGHT);
        g.drawLine(left, TOP, left, TOP + HEIGHT);
        g.drawString(Report.fmt(maxY), left - 55, TOP + 10);
        g.drawString("0", left - 15, TOP + HEIGHT);
        g.drawString(Report.fmt(maxX) + " s", left + plotW - 30, TOP + HEIGHT + 15);
        int i = 0;
        for (Map.Entry<String, List<List<Double>>> e : series.entrySet()) {
            g.setColor(PALETTE[i % PALETTE.length]);
            g.setStroke(new BasicStroke(2));
            int prevX = -1;
            int prevY = -1;
            for (List<Double> p : e.getValue()) {
                int px = left + (int) Math.round(p.get(0) / maxX * plotW);
                int py = TOP + HEIGHT - (int) Math.round(p.get(1) / maxY * HEIGHT);
                if (prevX >= 0) {
                    g.drawLine(prevX, prevY, px, py);
                }
                g.fillOval(px - 2, py - 2, 4, 4);
                prevX = px;
                prevY = py;
            }
            g.fillRect(left + plotW + 20, TOP + i * 20, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(e.getKey(), left + plotW + 38, TOP + 11 + i * 20);
            i++;
        }
    }

    /** A scenario's {@code destination_heap_after_gc}: {@code [seconds, MiB]} pairs, empty if it has none. */
    @SuppressWarnings("unchecked")
    static List<List<Double>> heapSeries(Object scenario) {
        if (scenario instanceof Map<?, ?> m && m.get("destination_heap_after_gc") instanceof List<?> series) {
            return (List<List<Double>>) series;
        }
        return List.of();
    }

    /** A white image with anti-aliasing and the title; the caller disposes of the graphics. */
    private static Graphics2D canvas(BufferedImage img, String title) {
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.drawString(title, 20, 28);
        return g;
    }

    private static void legend(Graphics2D g, String[] labels, Color[] colors) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        for (int i = 0; i < labels.length; i++) {
            g.setColor(colors[i]);
            g.fillRect(20 + i * 250, 395, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(labels[i], 38 + i * 250, 406);
        }
    }

    /**
     * A panel of lines, one per series (a path into each layout's result, named in {@code names} under the title),
     * points at each layout's median.
     */
    private static void curves(Graphics2D g, List<Map<String, Object>> layouts, int x, String title, String[] names,
                               String[]... series) {
        frame(g, x, title);
        int top = TOP;
        int height = HEIGHT;
        double max = 0;
        for (String[] path : series) {
            for (Map<String, Object> l : layouts) {
                Double v = Bench.get(l, path);
                max = v == null ? max : Math.max(max, v);
            }
        }
        int step = layouts.size() < 2 ? 0 : (WIDTH - 60) / (layouts.size() - 1);
        for (int i = 0; i < layouts.size(); i++) {
            g.setColor(Color.BLACK);
            g.drawString(String.valueOf(layouts.get(i).get("layout")), x + 20 + i * step, top + height + 15);
        }
        for (int s = 0; s < series.length; s++) {
            g.setColor(COLORS[s == 0 ? 0 : 2]);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawString(names[s], x + s * 160, top + 8);
            g.setStroke(new BasicStroke(2));
            int prevX = -1;
            int prevY = -1;
            for (int i = 0; i < layouts.size(); i++) {
                Double v = Bench.get(layouts.get(i), series[s]);
                if (v == null || max <= 0) {
                    prevX = -1;
                    continue;
                }
                int px = x + 30 + i * step;
                // 40 px under the top stay free for the series' names.
                int py = top + height - (int) Math.round(v / max * (height - 40));
                g.fillOval(px - 4, py - 4, 8, 8);
                g.drawString(Report.fmt(v), px + 6, py - 6);
                if (prevX >= 0) {
                    g.drawLine(prevX, prevY, px, py);
                }
                prevX = px;
                prevY = py;
            }
        }
    }

    /** A panel's title and x axis. */
    private static void frame(Graphics2D g, int x, String title) {
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.drawString(title, x, TOP - 10);
        g.setStroke(new BasicStroke(1));
        g.drawLine(x, TOP + HEIGHT, x + WIDTH, TOP + HEIGHT);
    }

    private static void panel(Graphics2D g, Map<String, Object> r, int x, String title, String group, String key) {
        frame(g, x, title);
        int top = TOP;
        int height = HEIGHT;
        double max = 0;
        Double[] v = new Double[SYSTEMS.length];
        for (int i = 0; i < SYSTEMS.length; i++) {
            v[i] = Bench.get(r, SYSTEMS[i], group, key);
            if (v[i] != null) {
                max = Math.max(max, v[i]);
            }
        }
        int barW = 70;
        for (int i = 0; i < SYSTEMS.length; i++) {
            int bx = x + 25 + i * (barW + 25);
            if (v[i] == null || max <= 0) {
                g.drawString("n/a", bx + 20, top + height - 5);
                continue;
            }
            int bh = (int) Math.round(v[i] / max * (height - 20));
            g.setColor(COLORS[i]);
            g.fillRect(bx, top + height - bh, barW, bh);
            g.setColor(Color.BLACK);
            g.drawString(Report.fmt(v[i]), bx + 10, top + height - bh - 4);
        }
    }
}
