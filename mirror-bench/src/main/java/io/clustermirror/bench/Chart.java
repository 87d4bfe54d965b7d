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
import java.util.Map;

/** A PNG with three bar panels (catch-up MB/s, CPU s/GiB, lag p99 ms) for mirror, MM2 and replication. */
final class Chart {
    private static final String[] SYSTEMS = {"mirror", "mm2", "replication"};
    private static final String[] LABELS = {"cluster mirror", "MirrorMaker 2", "replication"};
    private static final Color[] COLORS = {new Color(0x2b6cb0), new Color(0xc05621), new Color(0x718096)};

    private Chart() {
    }

    static void write(Map<String, Object> r, Path file) throws IOException {
        int w = 1050;
        int h = 420;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.drawString("Cluster Mirror benchmark, " + r.get("codec") + " (" + r.get("started_utc") + ")", 20, 28);
        panel(g, r, 20, "catch-up MB/s (higher is better)", "catch_up", "MBps");
        panel(g, r, 370, "CPU s per GiB copied (lower is better)", "catch_up", "cpu_s_per_GiB");
        panel(g, r, 720, "lag p99 ms at fixed rate (lower is better)", "lag", "p99_ms");
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        for (int i = 0; i < SYSTEMS.length; i++) {
            g.setColor(COLORS[i]);
            g.fillRect(20 + i * 170, 395, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(LABELS[i], 38 + i * 170, 406);
        }
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    private static void panel(Graphics2D g, Map<String, Object> r, int x, String title, String group, String key) {
        int top = 60;
        int height = 280;
        int width = 310;
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.drawString(title, x, top - 10);
        double max = 0;
        Double[] v = new Double[SYSTEMS.length];
        for (int i = 0; i < SYSTEMS.length; i++) {
            v[i] = Bench.get(r, SYSTEMS[i], group, key);
            if (v[i] != null) {
                max = Math.max(max, v[i]);
            }
        }
        g.setStroke(new BasicStroke(1));
        g.drawLine(x, top + height, x + width, top + height);
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
