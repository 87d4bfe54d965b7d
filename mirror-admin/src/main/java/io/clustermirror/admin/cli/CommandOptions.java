package io.clustermirror.admin.cli;

import io.clustermirror.common.NamePatterns;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.utils.Utils;

import net.sourceforge.argparse4j.ArgumentParsers;
import net.sourceforge.argparse4j.impl.Arguments;
import net.sourceforge.argparse4j.inf.Argument;
import net.sourceforge.argparse4j.inf.ArgumentParser;
import net.sourceforge.argparse4j.inf.ArgumentParserException;
import net.sourceforge.argparse4j.inf.MutuallyExclusiveGroup;
import net.sourceforge.argparse4j.inf.Namespace;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** The parsed and validated command line of {@link ClusterMirrorsCommand}. */
public final class CommandOptions {
    static final String PROGRAM = "kafka-cluster-mirrors.sh";
    static final String BOOTSTRAP_SERVER = "--bootstrap-server";
    static final String COMMAND_CONFIG = "--command-config";
    static final String TIMEOUT_MS = "--timeout-ms";
    static final String MIRROR = "--mirror";
    static final String MIRROR_CONFIG = "--mirror-config";
    static final String TOPICS = "--topics";
    static final String EXCLUDE = "--exclude";
    static final String JSON = "--json";
    static final String DISCARD_LOCAL_WRITES = "--discard-local-writes";
    static final String DRY_RUN = "--dry-run";
    static final String PLANNED = "--planned";
    static final String CONSISTENT = "--consistent";
    static final String WAIT = "--wait";
    static final String TRANSACTIONS = "--transactions";
    static final String SOURCE_BOOTSTRAP_SERVER = "--source-bootstrap-server";
    static final String SOURCE_COMMAND_CONFIG = "--source-command-config";
    static final String ADD_CONFIG = "--add-config";
    static final String ADD_CONFIG_FILE = "--add-config-file";
    static final String DELETE_CONFIG = "--delete-config";
    static final String HELP_FLAG = "--help";
    static final String VERSION_FLAG = "--version";
    private static final int HELP_WIDTH = 100;
    private static final List<OptionSpec> OPTIONS = List.of(
        new OptionSpec(BOOTSTRAP_SERVER, "HOST:PORT", "REQUIRED. The destination cluster's brokers to connect to, "
            + "comma-separated.", "--bootstrap-server dest1:9092,dest2:9092"),
        new OptionSpec(COMMAND_CONFIG, "FILE", "Kafka client properties for connecting to the destination cluster "
            + "(security, timeouts).", "--command-config admin-client.properties"),
        new OptionSpec(TIMEOUT_MS, "MS", "How long to wait for the operation, in milliseconds (default: the "
            + "client's default.api.timeout.ms, 60000). For --stop --planned: how long to wait for the topics to catch up. "
            + "For --start --wait: how long to start the topics and wait for them to catch up.", "--timeout-ms 120000"),
        new OptionSpec(MIRROR, "NAME", "The mirror's name.", "--mirror dr"),
        new OptionSpec(MIRROR_CONFIG, "FILE", "For --create: properties file with the source cluster's "
            + "bootstrap.servers, any Kafka client security settings for it and mirror.* settings. Secrets may be "
            + "ConfigProvider references such as ${file:/etc/mirror/secrets.properties:password}; they are never "
            + "printed.", "--mirror-config dr.properties"),
        new OptionSpec(ADD_CONFIG, "K=V,...", "For --alter: mirror configs to set, comma-separated; square brackets keep "
            + "a value with commas whole, as in kafka-configs.sh. Give secrets with --add-config-file instead: a command "
            + "line is visible to other users of the host.", "--add-config 'bootstrap.servers=[src3:9093,src4:9093]'"),
        new OptionSpec(ADD_CONFIG_FILE, "FILE", "For --alter: properties file of mirror configs to set (secrets are "
            + "encrypted before they leave the tool, as at --create, and never printed).", "--add-config-file new-credentials.properties"),
        new OptionSpec(DELETE_CONFIG, "K,...", "For --alter: mirror configs to remove (back to their defaults), "
            + "comma-separated; bootstrap.servers cannot be removed.", "--delete-config mirror.fetch.min.bytes"),
        new OptionSpec(SOURCE_BOOTSTRAP_SERVER, "HOST:PORT", "For --verify, --stop --planned, --start --wait and --start --dry-run: the "
            + "source cluster's brokers (default: the mirror's bootstrap.servers).", "--source-bootstrap-server src1:9092"),
        new OptionSpec(SOURCE_COMMAND_CONFIG, "FILE", "For --verify, --stop --planned, --start --wait and --start --dry-run: Kafka "
            + "client properties for reading the source cluster (security settings). The mirror's stored source passwords "
            + "are sealed, so the tool cannot use them; secrets in this file are never printed.", "--source-command-config source-client.properties"),
        new OptionSpec(TOPICS, "CSV", "For --start, --stop, --pause, --resume, --recover, --apply-held, --reject-held and --verify (default: all the mirror's "
            + "topics): comma-separated topic names or "
            + "regular expressions matching whole names (Java syntax without backreferences and lookaround, matched "
            + "in linear time). A pattern given to --start leaves out topics that are already in a mirror; name a "
            + "stopped topic to start it again.", "--topics 'orders,payments-.*'"),
        new OptionSpec(EXCLUDE, "CSV", "With --topics: comma-separated names or regular expressions to leave out "
            + "of what --topics matched.", "--exclude 'payments-test,.*-tmp'"),
        new OptionSpec(JSON, "", "For --list, --describe, --start --dry-run, --stop --dry-run, --stop --planned and --verify: print a JSON document instead of "
            + "text.",
            "--describe --json"),
        new OptionSpec(DRY_RUN, "", "For --stop: change nothing and print, per partition, what the stop would do now: the "
            + "range it would truncate (the open transactions of the source, from the last stable offset to the end), the "
            + "records in it and the producer ids of those transactions. For --start: change nothing and print, per partition "
            + "of the selected stopped topics, the range a start would truncate now (back to the stop's barrier, or the "
            + "source's on failback) and the records written since the stop in it.", "--stop --mirror dr --topics orders --dry-run"),
        new OptionSpec(PLANNED, "", "For --stop: a planned failover, once the source's producers are stopped. Waits until "
            + "every selected partition holds all the source holds (the destination's last stable offset has reached the "
            + "source's end, read from the source; no transaction open on either side), then stops them: nothing is "
            + "truncated. If --timeout-ms passes first, nothing is stopped and the tool exits 1 naming the partitions still "
            + "behind and by how many offsets. A paused topic is refused.", "--stop --mirror dr --topics orders --planned "
            + "--timeout-ms 300000"),
        new OptionSpec(CONSISTENT, "", "For --stop: a consistent failover. A plain stop cuts each partition at its own last "
            + "stable offset, which can leave a committed transaction of the source visible on some partitions and not on "
            + "others. This reads the ends of the selected partitions first and cuts each where no committed transaction "
            + "it sees is split, removing such transactions everywhere instead; it prints the transactions a plain stop "
            + "would have split and the records it cuts beyond one. It sees the destination's mirrored data and what the "
            + "mirror kept of the source's transaction log; its 'Not seen:' lines say what neither shows (--stop --dry-run "
            + "shows the same analysis without stopping).", "--stop --mirror dr --topics 'orders|payments' --consistent"),
        new OptionSpec(TRANSACTIONS, "", "For --describe: also show, per mirror, how many committed transactions of the source a "
            + "plain stop of all its mirroring topics would split across partitions now, and how many records a consistent stop "
            + "would cut beyond a plain one. It reads the tail of every mirroring partition and waits, while the source answers, "
            + "for the mirror to have read the source's transaction log past that read (a few seconds): the same analysis as "
            + "--stop --dry-run, which lists the transactions.", "--describe --mirror dr --transactions"),
        new OptionSpec(WAIT, "", "For --start: once the start is applied, wait until every partition of the started topics "
            + "is MIRRORING and holds all the source holds (read from the source, as --stop --planned reads it). If "
            + "--timeout-ms passes first, the topics stay started and the tool exits 1 naming the partitions not caught up "
            + "yet and by how many offsets. On a terminal it shows its progress on stderr, as --stop --planned and "
            + "--verify do.", "--start --mirror dr --topics orders --wait --timeout-ms 600000"),
        new OptionSpec(DISCARD_LOCAL_WRITES, "", "For --start: start named stopped topics again even though records "
            + "were written to them since their stop; mirroring resumes where it stopped, so those records are removed "
            + "(--describe shows the truncated range). Without it such a start fails with MIRROR_TOPIC_HAS_LOCAL_WRITES, "
            + "naming how many records it would remove.", "--start --mirror dr --topics orders --discard-local-writes"),
        new OptionSpec(VERSION_FLAG, "", "Print the versions of Cluster Mirror and of the Kafka client it runs with, and exit.",
            VERSION_FLAG),
        new OptionSpec(HELP_FLAG, "", "Print this help and exit.", HELP_FLAG));
    private static final String GENERAL_USAGE = "Usage: " + PROGRAM + " " + BOOTSTRAP_SERVER
        + " HOST:PORT ACTION [options]; see --help";
    private static final ArgumentParser PARSER = parser();
    private static final String HELP = renderHelp();

    private final Action action;
    private final Properties clientProperties;
    private final Integer timeoutMs;
    private final String mirror;
    private final Map<String, String> mirrorConfigs;
    private final List<String> topics;
    private final List<String> excludes;
    private final boolean json;
    private final boolean discardLocalWrites;
    private final boolean dryRun;
    private final boolean planned;
    private final boolean consistent;
    private final boolean transactions;
    private final boolean waitUntilCaughtUp;
    private final Properties sourceClientProperties;
    private final ConfigChanges configChanges;

    /** What --alter changes: configs to set and keys to delete. */
    record ConfigChanges(Map<String, String> set, List<String> deleted) {
        static final ConfigChanges NONE = new ConfigChanges(Map.of(), List.of());
    }

    private CommandOptions(Action action, Properties clientProperties, Integer timeoutMs, String mirror,
                           Map<String, String> mirrorConfigs, List<String> topics, List<String> excludes,
                           boolean json, boolean discardLocalWrites, boolean dryRun, boolean planned, boolean consistent,
                           boolean transactions, boolean waitUntilCaughtUp, Properties sourceClientProperties, ConfigChanges configChanges) {
        this.action = action;
        this.clientProperties = clientProperties;
        this.timeoutMs = timeoutMs;
        this.mirror = mirror;
        this.mirrorConfigs = mirrorConfigs;
        this.topics = topics;
        this.excludes = excludes;
        this.json = json;
        this.discardLocalWrites = discardLocalWrites;
        this.dryRun = dryRun;
        this.planned = planned;
        this.consistent = consistent;
        this.transactions = transactions;
        this.waitUntilCaughtUp = waitUntilCaughtUp;
        this.sourceClientProperties = sourceClientProperties;
        this.configChanges = configChanges;
    }

    /** True if the command line asks for help, which wins over everything else on it. */
    public static boolean isHelpRequested(String... args) {
        return Arrays.stream(args).anyMatch(arg -> arg.equals(HELP_FLAG) || arg.equals("-h"));
    }

    /** Every option's flag, as --help lists them (the actions aside: {@link Action#flag()}). */
    static List<String> optionFlags() {
        return OPTIONS.stream().map(OptionSpec::flag).toList();
    }

    /** True if the command line asks for the version (and not for help, which wins). */
    public static boolean isVersionRequested(String... args) {
        return Arrays.asList(args).contains(VERSION_FLAG);
    }

    /** The full help: every option with a description and an example. */
    public static String helpText() {
        return HELP;
    }

    /**
     * Parses and validates a command line, reading the files it names.
     *
     * @throws UsageException naming what is wrong
     */
    public static CommandOptions parse(String... args) throws UsageException {
        Namespace ns;
        try {
            ns = PARSER.parseArgs(args);
        } catch (ArgumentParserException e) {
            throw new UsageException(e.getMessage(), GENERAL_USAGE);
        }
        Action action = ns.get("action");
        String usage = action.usage();
        Map<String, Boolean> given = Map.ofEntries(
            Map.entry(ADD_CONFIG, ns.get("add_config") != null),
            Map.entry(ADD_CONFIG_FILE, ns.get("add_config_file") != null),
            Map.entry(DELETE_CONFIG, ns.get("delete_config") != null),
            Map.entry(MIRROR, ns.get("mirror") != null),
            Map.entry(MIRROR_CONFIG, ns.get("mirror_config") != null),
            Map.entry(TOPICS, ns.get("topics") != null),
            Map.entry(EXCLUDE, ns.get("exclude") != null),
            Map.entry(JSON, ns.getBoolean("json")),
            Map.entry(DISCARD_LOCAL_WRITES, ns.getBoolean("discard_local_writes")),
            Map.entry(DRY_RUN, ns.getBoolean("dry_run")),
            Map.entry(PLANNED, ns.getBoolean("planned")),
            Map.entry(CONSISTENT, ns.getBoolean("consistent")),
            Map.entry(TRANSACTIONS, ns.getBoolean("transactions")),
            Map.entry(WAIT, ns.getBoolean("wait")),
            Map.entry(SOURCE_BOOTSTRAP_SERVER, ns.get("source_bootstrap_server") != null),
            Map.entry(SOURCE_COMMAND_CONFIG, ns.get("source_command_config") != null));
        for (String option : List.of(MIRROR, MIRROR_CONFIG, TOPICS, EXCLUDE, JSON, DISCARD_LOCAL_WRITES, DRY_RUN, PLANNED, CONSISTENT, TRANSACTIONS,
                WAIT, SOURCE_BOOTSTRAP_SERVER, SOURCE_COMMAND_CONFIG, ADD_CONFIG, ADD_CONFIG_FILE, DELETE_CONFIG)) {
            if (given.get(option) && !action.accepts(option)) {
                throw new UsageException(option + " cannot be used with " + action.flag(), usage);
            }
        }
        for (String option : action.required()) {
            if (!given.get(option)) {
                throw new UsageException(action.flag() + " needs " + withMetavar(option), usage);
            }
        }
        if (action == Action.ALTER && !given.get(ADD_CONFIG) && !given.get(ADD_CONFIG_FILE) && !given.get(DELETE_CONFIG)) {
            throw new UsageException(action.flag() + " needs " + withMetavar(ADD_CONFIG) + ", " + withMetavar(ADD_CONFIG_FILE)
                + " or " + withMetavar(DELETE_CONFIG), usage);
        }
        if (action == Action.STOP && given.get(JSON) && !given.get(DRY_RUN) && !given.get(PLANNED) && !given.get(CONSISTENT)) {
            throw new UsageException(JSON + " with " + action.flag() + " needs " + DRY_RUN + ", " + PLANNED + " or " + CONSISTENT, usage);
        }
        if (given.get(CONSISTENT) && given.get(PLANNED)) {
            throw new UsageException(CONSISTENT + " cannot be used with " + PLANNED + ": a planned stop is consistent already (it "
                + "waits until no transaction is open on any selected partition, so every one is whole)", usage);
        }
        if (given.get(CONSISTENT) && given.get(DRY_RUN)) {
            throw new UsageException(CONSISTENT + " cannot be used with " + DRY_RUN + ": the dry-run always shows where a "
                + "consistent stop would cut", usage);
        }
        if (action == Action.START && given.get(JSON) && !given.get(DRY_RUN)) {
            throw new UsageException(JSON + " with " + action.flag() + " needs " + DRY_RUN, usage);
        }
        if (action == Action.START && !given.get(DRY_RUN) && !given.get(WAIT)) {
            for (String option : List.of(SOURCE_BOOTSTRAP_SERVER, SOURCE_COMMAND_CONFIG)) {
                if (given.get(option)) {
                    throw new UsageException(option + " with " + action.flag() + " needs " + DRY_RUN + " or " + WAIT, usage);
                }
            }
        }
        if (given.get(WAIT) && given.get(DRY_RUN)) {
            throw new UsageException(WAIT + " cannot be used with " + DRY_RUN + ": a dry-run starts nothing to wait for", usage);
        }
        if (action == Action.START && given.get(DRY_RUN) && given.get(DISCARD_LOCAL_WRITES)) {
            throw new UsageException(DISCARD_LOCAL_WRITES + " cannot be used with " + DRY_RUN + ": the dry-run shows what a "
                + "start would truncate either way", usage);
        }
        if (given.get(PLANNED) && given.get(DRY_RUN)) {
            throw new UsageException(PLANNED + " cannot be used with " + DRY_RUN + ": the dry-run already shows what a stop "
                + "would truncate now", usage);
        }
        if (action == Action.STOP && !given.get(PLANNED)
                && (given.get(SOURCE_BOOTSTRAP_SERVER) || given.get(SOURCE_COMMAND_CONFIG))) {
            throw new UsageException((given.get(SOURCE_BOOTSTRAP_SERVER) ? SOURCE_BOOTSTRAP_SERVER : SOURCE_COMMAND_CONFIG)
                + " with " + action.flag() + " needs " + PLANNED, usage);
        }
        String mirror = ns.getString("mirror");
        if (mirror != null && mirror.isBlank()) {
            throw new UsageException(MIRROR + " needs a non-empty name", usage);
        }
        Integer timeoutMs = ns.getInt("timeout_ms");
        if (timeoutMs != null && timeoutMs <= 0) {
            throw new UsageException(TIMEOUT_MS + " must be a positive number of milliseconds, not " + timeoutMs, usage);
        }
        Properties clientProperties = ns.getString("command_config") == null
            ? new Properties() : loadProperties(COMMAND_CONFIG, ns.getString("command_config"), usage);
        clientProperties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, ns.getString("bootstrap_server"));
        Map<String, String> mirrorConfigs = ns.getString("mirror_config") == null ? Map.of()
            : toMap(loadProperties(MIRROR_CONFIG, ns.getString("mirror_config"), usage));
        Properties sourceClientProperties = ns.getString("source_command_config") == null
            ? new Properties() : loadProperties(SOURCE_COMMAND_CONFIG, ns.getString("source_command_config"), usage);
        if (ns.getString("source_bootstrap_server") != null) {
            sourceClientProperties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, ns.getString("source_bootstrap_server"));
        }
        return new CommandOptions(action, clientProperties, timeoutMs, mirror, mirrorConfigs,
            patterns(TOPICS, ns.getString("topics"), usage), patterns(EXCLUDE, ns.getString("exclude"), usage),
            ns.getBoolean("json"), ns.getBoolean("discard_local_writes"), ns.getBoolean("dry_run"), ns.getBoolean("planned"),
            ns.getBoolean("consistent"), ns.getBoolean("transactions"), ns.getBoolean("wait"), sourceClientProperties,
            action == Action.ALTER ? configChanges(ns, usage) : ConfigChanges.NONE);
    }

    /** The configs --add-config and --add-config-file set and --delete-config deletes; a key is given once. */
    private static ConfigChanges configChanges(Namespace ns, String usage) throws UsageException {
        Map<String, String> set = new TreeMap<>();
        if (ns.getString("add_config_file") != null) {
            set.putAll(toMap(loadProperties(ADD_CONFIG_FILE, ns.getString("add_config_file"), usage)));
        }
        if (ns.getString("add_config") != null) {
            for (String entry : splitOutsideBrackets(ns.getString("add_config"))) {
                int eq = entry.indexOf('=');
                if (eq <= 0) {
                    throw new UsageException(ADD_CONFIG + " takes key=value entries; '" + entry.split("=", 2)[0]
                        + "' has no key or no '='", usage);
                }
                String key = entry.substring(0, eq).trim();
                String value = entry.substring(eq + 1).trim();
                if (value.startsWith("[") && value.endsWith("]")) {
                    value = value.substring(1, value.length() - 1);
                }
                if (set.put(key, value) != null) {
                    throw new UsageException("config '" + key + "' is given twice to " + ADD_CONFIG + "/" + ADD_CONFIG_FILE, usage);
                }
            }
        }
        List<String> deleted = ns.getString("delete_config") == null ? List.of()
            : Arrays.stream(ns.getString("delete_config").split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
        for (String key : deleted) {
            if (set.containsKey(key)) {
                throw new UsageException("config '" + key + "' is both set and deleted; give it once", usage);
            }
        }
        return new ConfigChanges(set, deleted);
    }

    /** Splits at commas outside square brackets: {@code a=1,b=[x,y]} is {@code a=1} and {@code b=[x,y]}. */
    private static List<String> splitOutsideBrackets(String csv) {
        List<String> parts = new java.util.ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < csv.length(); i++) {
            char c = csv.charAt(i);
            depth += c == '[' ? 1 : c == ']' && depth > 0 ? -1 : 0;
            if (c == ',' && depth == 0) {
                parts.add(csv.substring(start, i));
                start = i + 1;
            }
        }
        parts.add(csv.substring(start));
        return parts.stream().map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    public Action action() {
        return action;
    }

    /** Client properties for the destination: the --command-config file with --bootstrap-server. */
    public Properties clientProperties() {
        return clientProperties;
    }

    /** The operation timeout, or null for the client's default. */
    public Integer timeoutMs() {
        return timeoutMs;
    }

    /** The mirror's name, or null if not given (only --list and --describe go without). */
    public String mirror() {
        return mirror;
    }

    /** The --mirror-config file's entries, sorted; empty unless --create. */
    public Map<String, String> mirrorConfigs() {
        return mirrorConfigs;
    }

    /** Topic names or regular expressions; empty unless a topic action. */
    public List<String> topics() {
        return topics;
    }

    /** Topic names or regular expressions to leave out; possibly empty. */
    public List<String> excludes() {
        return excludes;
    }

    public boolean json() {
        return json;
    }

    /** True for --stop --dry-run and --start --dry-run: print what the operation would do, change nothing. */
    public boolean dryRun() {
        return dryRun;
    }

    /** True for --describe --transactions: analyse the transactions a plain stop would split now. */
    public boolean transactions() {
        return transactions;
    }

    /** True for --stop --consistent: cut where no committed transaction seen is split. */
    public boolean consistent() {
        return consistent;
    }

    /** True for --stop --planned: wait for the topics to catch up with the source, then stop them. */
    public boolean planned() {
        return planned;
    }

    /** True for --start --wait: wait for the started topics to catch up with the source. */
    public boolean waitUntilCaughtUp() {
        return waitUntilCaughtUp;
    }

    /**
     * For --verify, --stop --planned, --start --wait and --start --dry-run: client properties for the source, from
     * --source-command-config with --source-bootstrap-server; empty if neither is given.
     */
    public Properties sourceClientProperties() {
        return sourceClientProperties;
    }

    /** For --alter: the configs to set and to delete; empty otherwise. */
    public ConfigChanges configChanges() {
        return configChanges;
    }

    /** True if --start may remove records written to stopped topics since their stop. */
    public boolean discardLocalWrites() {
        return discardLocalWrites;
    }

    /** One line: the given action synopsis with the options every action takes. */
    static String usage(String actionSynopsis) {
        return "Usage: " + PROGRAM + " " + BOOTSTRAP_SERVER + " HOST:PORT " + actionSynopsis + " ["
            + COMMAND_CONFIG + " FILE] [" + TIMEOUT_MS + " MS]; see --help";
    }

    static String withMetavar(String option) {
        String metavar = OPTIONS.stream().filter(o -> o.flag().equals(option)).findFirst().orElseThrow().metavar();
        return metavar.isEmpty() ? option : option + " " + metavar;
    }

    /** Splits a CSV of topic names or regular expressions, checking that each compiles. */
    private static List<String> patterns(String option, String csv, String usage) throws UsageException {
        if (csv == null) {
            return List.of();
        }
        List<String> patterns = Arrays.stream(csv.split(",")).map(String::trim).filter(s -> !s.isEmpty())
            .collect(Collectors.toList());
        if (patterns.isEmpty()) {
            throw new UsageException(option + " needs at least one topic name or regular expression", usage);
        }
        for (String pattern : patterns) {
            try {
                NamePatterns.compile(pattern);
            } catch (IllegalArgumentException e) {
                throw new UsageException(option + ": " + e.getMessage(), usage);
            }
        }
        return List.copyOf(patterns);
    }

    private static Properties loadProperties(String option, String file, String usage) throws UsageException {
        try {
            return Utils.loadProps(file);
        } catch (IOException e) {
            throw new UsageException(option + " file '" + file + "' cannot be read ("
                + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", usage);
        }
    }

    private static Map<String, String> toMap(Properties props) {
        Map<String, String> map = new TreeMap<>();
        props.stringPropertyNames().forEach(key -> map.put(key, props.getProperty(key)));
        return map;
    }

    private static ArgumentParser parser() {
        ArgumentParser parser = ArgumentParsers.newArgumentParser(PROGRAM, false);
        MutuallyExclusiveGroup actions = parser.addMutuallyExclusiveGroup("actions").required(true);
        for (Action action : Action.values()) {
            actions.addArgument(action.flag()).dest("action").action(Arguments.storeConst()).setConst(action);
        }
        for (OptionSpec option : OPTIONS) {
            if (option.flag().equals(HELP_FLAG) || option.flag().equals(VERSION_FLAG)) {
                continue; // answered before parsing
            }
            Argument argument = parser.addArgument(option.flag());
            if (option.metavar().isEmpty()) {
                argument.action(Arguments.storeTrue());
            } else {
                argument.metavar(option.metavar());
            }
            if (option.flag().equals(BOOTSTRAP_SERVER)) {
                argument.required(true);
            } else if (option.flag().equals(TIMEOUT_MS)) {
                argument.type(Integer.class);
            }
        }
        return parser;
    }

    /**
     * The help, rendered here rather than by argparse4j, whose wrapping splits examples at hyphens
     * ({@code --mir-\nror}); lines break only at spaces.
     */
    private static String renderHelp() {
        StringBuilder help = new StringBuilder(GENERAL_USAGE.replace("; see --help", "")).append("\n\n");
        wrap(help, "", "Manage Cluster Mirror mirrors: offset-preserving replication of topics from a source Kafka "
            + "cluster into read-only topics of a destination cluster whose brokers run the Cluster Mirror "
            + "extension. Connects to the destination cluster.");
        help.append("\nActions (exactly one):\n");
        for (Action action : Action.values()) {
            describe(help, action.flag(), action.description(), action.example());
        }
        help.append("\nOptions:\n");
        for (OptionSpec option : OPTIONS) {
            describe(help, withMetavar(option.flag()), option.description(), option.example());
        }
        help.append("\nExamples:\n");
        for (Action action : List.of(Action.CREATE, Action.START, Action.DESCRIBE, Action.STOP, Action.VERIFY)) {
            help.append("  ").append(PROGRAM).append(" --bootstrap-server dest:9092 ").append(action.example())
                .append('\n');
        }
        help.append("\nExit status: 0 on success, 1 if the operation failed (or --verify found a difference),\n"
            + "2 if the command line is wrong.\n");
        return help.toString();
    }

    private static void describe(StringBuilder help, String synopsis, String description, String example) {
        help.append("  ").append(synopsis).append('\n');
        wrap(help, "      ", description);
        help.append("      Example: ").append(example).append('\n');
    }

    private static void wrap(StringBuilder help, String indent, String text) {
        StringBuilder line = new StringBuilder(indent);
        for (String word : text.split(" ")) {
            if (line.length() > indent.length() && line.length() + 1 + word.length() > HELP_WIDTH) {
                help.append(line).append('\n');
                line.setLength(0);
                line.append(indent);
            }
            line.append(line.length() > indent.length() ? " " : "").append(word);
        }
        help.append(line).append('\n');
    }

    /** An option with what --help says of it. An empty metavar marks a flag without a value. */
    private record OptionSpec(String flag, String metavar, String description, String example) {
    }
}
