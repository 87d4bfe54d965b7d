package io.clustermirror.broker.partition;

import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The source clusters' mirror images, read once for all the preparations that wait for one. A preparation asks for
 * a {@link #ticket()} when it is requested and later for the image with it; it gets the last image read for its mirror
 * if that read began after the ticket was drawn, and otherwise reads one itself (which then serves the preparations
 * requested before it began).
 *
 * <p>Why that is as good as a read per preparation: a read that began after the request sees every record the
 * source wrote before the request, which is all a preparation can rely on anyway (the source may write the next
 * record just after any read). What it spares is a client and a full replay of the source's mirror topics per
 * partition: with a read each, a mirror's first start of 10,000 partitions made 10,000 of them, one after another.
 *
 * <p>Invariant: an image returned for ticket {@code t} came from a read whose stamp, drawn from the same counter as the
 * tickets before the read began, is greater than {@code t}, of the same mirror with equal configs. A failed read
 * leaves the last image in place and throws to its caller.
 */
final class SharedSourceImages {
    private final Function<MirrorConfig, MirrorImage> reader;
    private final AtomicLong clock = new AtomicLong();
    /** The last image read per mirror name. */
    private final Map<String, Read> latest = new ConcurrentHashMap<>();

    private record Read(Map<String, String> configs, long stamp, MirrorImage image) {
    }

    /** @param reader reads a source's image afresh (a client of its own per call) */
    SharedSourceImages(Function<MirrorConfig, MirrorImage> reader) {
        this.reader = reader;
    }

    /** Drawn when a preparation is requested: only a read that begins after this serves it. */
    long ticket() {
        return clock.incrementAndGet();
    }

    /** The source image of {@code config}'s mirror, read after {@code ticket} was drawn. */
    MirrorImage image(MirrorConfig config, long ticket) {
        Read last = latest.get(config.name());
        if (last != null && last.stamp() > ticket && last.configs().equals(config.originals())) {
            return last.image();
        }
        long stamp = clock.incrementAndGet();
        MirrorImage image = reader.apply(config);
        latest.merge(config.name(), new Read(config.originals(), stamp, image), (old, read) -> old.stamp() > read.stamp() ? old : read);
        return image;
    }

    /** Keeps the images of these mirrors only (the others were deleted). */
    void retain(Set<String> mirrors) {
        latest.keySet().retainAll(mirrors);
    }
}
