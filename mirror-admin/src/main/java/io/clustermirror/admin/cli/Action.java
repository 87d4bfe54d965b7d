package io.clustermirror.admin.cli;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.clustermirror.admin.cli.CommandOptions.ADD_CONFIG;
import static io.clustermirror.admin.cli.CommandOptions.ADD_CONFIG_FILE;
import static io.clustermirror.admin.cli.CommandOptions.DELETE_CONFIG;
import static io.clustermirror.admin.cli.CommandOptions.DISCARD_LOCAL_WRITES;
import static io.clustermirror.admin.cli.CommandOptions.DRY_RUN;
import static io.clustermirror.admin.cli.CommandOptions.EXCLUDE;
import static io.clustermirror.admin.cli.CommandOptions.JSON;
import static io.clustermirror.admin.cli.CommandOptions.MIRROR;
import static io.clustermirror.admin.cli.CommandOptions.MIRROR_CONFIG;
import static io.clustermirror.admin.cli.CommandOptions.CONSISTENT;
import static io.clustermirror.admin.cli.CommandOptions.PLANNED;
import static io.clustermirror.admin.cli.CommandOptions.SOURCE_BOOTSTRAP_SERVER;
import static io.clustermirror.admin.cli.CommandOptions.SOURCE_COMMAND_CONFIG;
import static io.clustermirror.admin.cli.CommandOptions.TOPICS;
import static io.clustermirror.admin.cli.CommandOptions.TRANSACTIONS;
import static io.clustermirror.admin.cli.CommandOptions.WAIT;

/** The tool's actions, with the action-specific options each requires or accepts. */
public enum Action {
    CREATE("--create", "Create a mirror of a source cluster, configured by --mirror-config.",
        "--create --mirror dr --mirror-config dr.properties", List.of(MIRROR, MIRROR_CONFIG), List.of()),
    DELETE("--delete", "Delete a mirror that has no topics left.", "--delete --mirror dr",
        List.of(MIRROR), List.of()),
    LIST("--list", "List the mirrors, one per line.", "--list", List.of(), List.of(JSON)),
    DESCRIBE("--describe", "Show a mirror's configs (secrets hidden) and the state of each partition of its "
        + "topics; every mirror's without --mirror.", "--describe --mirror dr", List.of(), List.of(MIRROR, JSON, TRANSACTIONS)),
    START("--start", "Start mirroring source topics into read-only destination topics of the same names.",
        "--start --mirror dr --topics 'orders,payments-.*'", List.of(MIRROR, TOPICS),
        List.of(EXCLUDE, DISCARD_LOCAL_WRITES, DRY_RUN, WAIT, SOURCE_BOOTSTRAP_SERVER, SOURCE_COMMAND_CONFIG, JSON)),
    STOP("--stop", "Stop mirroring topics (failover): they become normal writable topics.",
        "--stop --mirror dr --topics orders", List.of(MIRROR, TOPICS),
        List.of(EXCLUDE, DRY_RUN, PLANNED, CONSISTENT, SOURCE_BOOTSTRAP_SERVER, SOURCE_COMMAND_CONFIG, JSON)),
    PAUSE("--pause", "Pause mirroring topics: they stay read-only but fetch nothing.",
        "--pause --mirror dr --topics 'payments-.*'", List.of(MIRROR, TOPICS), List.of(EXCLUDE)),
    RESUME("--resume", "Resume mirroring paused topics.", "--resume --mirror dr --topics 'payments-.*'",
        List.of(MIRROR, TOPICS), List.of(EXCLUDE)),
    RECOVER("--recover", "Try the FAILED partitions of mirror topics again now, with a fresh run of automatic retries (a "
        + "partition stays FAILED once mirror.partition.retries are used up). Refused when none is FAILED, or when the "
        + "source topic of every FAILED one was deleted or re-created (stop those instead).",
        "--recover --mirror dr --topics orders", List.of(MIRROR, TOPICS), List.of(EXCLUDE)),
    APPLY_HELD("--apply-held", "Apply now what topics hold back under mirror.source.destructive.policy=hold (see --describe): "
        + "the source's log start moves (the destination deletes the records below them) and topic changes that delete "
        + "sooner or grow them beyond mirror.partitions.max.growth.", "--apply-held --mirror dr --topics orders",
        List.of(MIRROR, TOPICS), List.of(EXCLUDE)),
    REJECT_HELD("--reject-held", "Reject what topics hold back: the destination keeps those records, configs and partition "
        + "counts while the source keeps the changes; a further source change is held anew.",
        "--reject-held --mirror dr --topics orders", List.of(MIRROR, TOPICS), List.of(EXCLUDE)),
    VERIFY("--verify", "Prove a mirror's integrity: compare the source's and the destination's batches of each partition "
        + "over the mirrored range (up to the barrier of a stopped topic, else the destination's high watermark), every byte "
        + "but the partition leader epoch, each side's CRC checked. Prints IDENTICAL or DIFFERS at offset N per partition; "
        + "exits 0 only if all are identical. Compacted topics are refused (each cluster compacts on its own).",
        "--verify --mirror dr --topics orders", List.of(MIRROR),
        List.of(TOPICS, EXCLUDE, SOURCE_BOOTSTRAP_SERVER, SOURCE_COMMAND_CONFIG, JSON)),
    ALTER("--alter", "Change a running mirror's configs: its topics keep mirroring from where they are, on source clients "
        + "built with the new configs. The change is all or nothing; a change of the source connection is tried before it "
        + "is stored.", "--alter --mirror dr --add-config-file new-credentials.properties", List.of(MIRROR),
        List.of(ADD_CONFIG, ADD_CONFIG_FILE, DELETE_CONFIG));

    private final String flag;
    private final String description;
    private final String example;
    private final List<String> required;
    private final List<String> optional;

    Action(String flag, String description, String example, List<String> required, List<String> optional) {
        this.flag = flag;
        this.description = description;
        this.example = example;
        this.required = required;
        this.optional = optional;
    }

    public String flag() {
        return flag;
    }

    String description() {
        return description;
    }

    String example() {
        return example;
    }

    /** Action-specific options this action cannot do without. */
    List<String> required() {
        return required;
    }

    /** True if the action-specific option may be given with this action. */
    boolean accepts(String option) {
        return required.contains(option) || optional.contains(option);
    }

    /** How to call the tool for this action, in one line. */
    String usage() {
        return CommandOptions.usage(Stream.concat(Stream.of(flag),
            Stream.concat(required.stream().map(CommandOptions::withMetavar),
                optional.stream().map(o -> "[" + CommandOptions.withMetavar(o) + "]")))
            .collect(Collectors.joining(" ")));
    }
}
