package io.clustermirror.broker.partition;

/**
 * Where a destination log must be truncated before mirroring goes on, and what proves that it differs from the
 * source from there on. Nothing may truncate mirrored data without one.
 *
 * @param offset   the new log end: every batch at or above it goes
 * @param evidence the kind of proof
 * @param proof    the proof itself, for the operator's log line
 */
record Cut(long offset, Evidence evidence, String proof) {
    enum Evidence {
        /** The source's leader-epoch lineage: its epoch of the last mirrored batch ends below our log end. */
        SOURCE_EPOCH_LINEAGE("source epoch lineage"),
        /** A MIRROR_PID_RESET barrier: a stop ended mirrored data there, on this side or the other. */
        BARRIER("barrier"),
        /** A batch of the destination that differs from the source's at the same offsets. */
        BATCH_COMPARISON("batch comparison");

        private final String label;

        Evidence(String label) {
            this.label = label;
        }

        @Override
        public String toString() {
            return label;
        }
    }
}
