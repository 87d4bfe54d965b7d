package io.clustermirror.common.batch;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import net.jpountz.lz4.LZ4FrameInputStream;
import org.xerial.snappy.SnappyInputStream;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.zip.GZIPInputStream;

/**
 * The codecs a batch's attributes name (their lowest three bits), and how to read a compressed records block. Each codec's
 * stream format is the one Kafka's producers write: gzip (RFC 1952), snappy in xerial's stream framing, lz4 in the LZ4
 * frame format, zstd frames. The codec libraries are Kafka's own runtime dependencies, on the classpath of every broker
 * and client; the mirror never compresses, it only decodes records to compare or explain them.
 */
public enum BatchCompression {
    NONE(0), GZIP(1), SNAPPY(2), LZ4(3), ZSTD(4);

    private final int id;

    BatchCompression(int id) {
        this.id = id;
    }

    public int id() {
        return id;
    }

    /**
     * @throws IllegalArgumentException for an id no Kafka release writes
     */
    public static BatchCompression forId(int id) {
        for (BatchCompression c : values()) {
            if (c.id == id) {
                return c;
            }
        }
        throw new IllegalArgumentException("Unknown compression codec id " + id);
    }

    /** A stream of the uncompressed bytes of {@code block} (from its position to its limit, which it does not move). */
    InputStream decompress(ByteBuffer block) throws IOException {
        byte[] bytes = new byte[block.remaining()];
        block.duplicate().get(bytes);
        InputStream in = new ByteArrayInputStream(bytes);
        return switch (this) {
            case NONE -> in;
            case GZIP -> new GZIPInputStream(in);
            case SNAPPY -> new SnappyInputStream(in);
            case LZ4 -> new LZ4FrameInputStream(in);
            case ZSTD -> new ZstdInputStreamNoFinalizer(in);
        };
    }
}
