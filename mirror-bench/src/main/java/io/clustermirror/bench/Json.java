package io.clustermirror.bench;

import java.util.Collection;
import java.util.Map;

/** Minimal JSON writer for the result maps (strings, numbers, booleans, maps, collections). */
final class Json {
    private Json() {
    }

    static String write(Object o) {
        StringBuilder sb = new StringBuilder();
        write(sb, o, "");
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object o, String indent) {
        if (o == null) {
            sb.append("null");
        } else if (o instanceof Number n) {
            double d = n.doubleValue();
            sb.append(Double.isFinite(d) ? n.toString() : "null");
        } else if (o instanceof Boolean) {
            sb.append(o);
        } else if (o instanceof Map<?, ?> m) {
            sb.append("{");
            String in = indent + "  ";
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(first ? "\n" : ",\n").append(in);
                first = false;
                str(sb, String.valueOf(e.getKey()));
                sb.append(": ");
                write(sb, e.getValue(), in);
            }
            sb.append(first ? "}" : "\n" + indent + "}");
        } else if (o instanceof Collection<?> c) {
            sb.append("[");
            boolean first = true;
            for (Object v : c) {
                sb.append(first ? "" : ", ");
                first = false;
                write(sb, v, indent);
            }
            sb.append("]");
        } else {
            str(sb, o.toString());
        }
    }

    private static void str(StringBuilder sb, String s) {
        sb.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
