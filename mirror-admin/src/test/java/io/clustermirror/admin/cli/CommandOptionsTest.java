package io.clustermirror.admin.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CommandOptionsTest {
    private static final String GENERAL_USAGE =
        "Usage: kafka-cluster-mirrors.sh --bootstrap-server HOST:PORT ACTION [options]; see --help";
    private static final String START_USAGE = "Usage: kafka-cluster-mirrors.sh --bootstrap-server HOST:PORT "
        + "--start --mirror NAME --topics CSV [--exclude CSV] [--discard-local-writes] [--dry-run] [--wait] "
        + "[--source-bootstrap-server HOST:PORT] [--source-command-config FILE] [--json] [--command-config FILE] [--timeout-ms MS]; "
        + "see --help";

    @TempDir
    Path dir;

    private static CommandOptions parse(String... args) throws UsageException {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", "dest:9092"));
        all.addAll(List.of(args));
        return CommandOptions.parse(all.toArray(new String[0]));
    }

    private static UsageException usageError(String... args) {
        return assertThrows(UsageException.class, () -> parse(args));
    }

    private Path file(String name, String content) throws IOException {
        return Files.writeString(dir.resolve(name), content);
    }

    @Test
    void create() throws Exception {
        Path config = file("dr.properties", "bootstrap.servers=src:9092\nsasl.jaas.config=${file:/s:jaas}\n");
        CommandOptions options = parse("--create", "--mirror", "dr", "--mirror-config", config.toString());
        assertEquals(Action.CREATE, options.action());
        assertEquals("dr", options.mirror());
        assertEquals(Map.of("bootstrap.servers", "src:9092", "sasl.jaas.config", "${file:/s:jaas}"),
            options.mirrorConfigs());
        assertEquals("dest:9092", options.clientProperties().get("bootstrap.servers"));
        assertNull(options.timeoutMs());
    }

    @Test
    void delete() throws Exception {
        CommandOptions options = parse("--delete", "--mirror", "dr");
        assertEquals(Action.DELETE, options.action());
        assertEquals("dr", options.mirror());
    }

    @Test
    void list() throws Exception {
        CommandOptions options = parse("--list", "--json");
        assertEquals(Action.LIST, options.action());
        assertTrue(options.json());
        assertFalse(parse("--list").json());
    }

    @Test
    void describeOneOrAll() throws Exception {
        assertEquals("dr", parse("--describe", "--mirror", "dr").mirror());
        CommandOptions all = parse("--describe", "--json");
        assertEquals(Action.DESCRIBE, all.action());
        assertNull(all.mirror());
        assertTrue(all.json());
    }

    @ParameterizedTest
    @EnumSource(value = Action.class, names = {"START", "STOP", "PAUSE", "RESUME"})
    void topicActions(Action action) throws Exception {
        CommandOptions options = parse(action.flag(), "--mirror", "dr", "--topics", " orders, payments-.* ,,",
            "--exclude", "payments-test", "--timeout-ms", "5000");
        assertEquals(action, options.action());
        assertEquals(List.of("orders", "payments-.*"), options.topics());
        assertEquals(List.of("payments-test"), options.excludes());
        assertEquals(5000, options.timeoutMs());
        assertEquals(List.of(), parse(action.flag(), "--mirror", "dr", "--topics", "a").excludes());
    }

    @Test
    void startWaitTakesTheSourceClientSettings() throws Exception {
        Path config = file("source.properties", "security.protocol=SSL\n");
        CommandOptions options = parse("--start", "--mirror", "dr", "--topics", "a", "--wait", "--source-command-config",
            config.toString(), "--source-bootstrap-server", "src:9093");
        assertTrue(options.waitUntilCaughtUp());
        assertEquals("SSL", options.sourceClientProperties().get("security.protocol"));
        assertEquals("src:9093", options.sourceClientProperties().get("bootstrap.servers"));
        assertFalse(parse("--start", "--mirror", "dr", "--topics", "a").waitUntilCaughtUp());
    }

    @Test
    void commandConfigIsLoadedAndBootstrapServerWins() throws Exception {
        Path config = file("client.properties", "security.protocol=SSL\nbootstrap.servers=ignored:1\n");
        CommandOptions options = parse("--list", "--command-config", config.toString());
        assertEquals("SSL", options.clientProperties().get("security.protocol"));
        assertEquals("dest:9092", options.clientProperties().get("bootstrap.servers"));
    }

    @Test
    void missingRequiredOptionsAreNamedWithTheActionsUsage() {
        UsageException e = usageError("--start", "--mirror", "dr");
        assertEquals("--start needs --topics CSV", e.getMessage());
        assertEquals(START_USAGE, e.usage());
        assertEquals("--start needs --mirror NAME", usageError("--start", "--topics", "a").getMessage());
        assertEquals("--create needs --mirror-config FILE", usageError("--create", "--mirror", "dr").getMessage());
        assertEquals("--create needs --mirror NAME", usageError("--create", "--mirror-config", "f").getMessage());
        assertEquals("--delete needs --mirror NAME", usageError("--delete").getMessage());
        assertEquals("--resume needs --mirror NAME", usageError("--resume").getMessage());
    }

    @Test
    void optionsOfOtherActionsAreRejected() {
        assertEquals("--mirror cannot be used with --list", usageError("--list", "--mirror", "dr").getMessage());
        assertEquals("--discard-local-writes cannot be used with --stop",
            usageError("--stop", "--mirror", "dr", "--topics", "a", "--discard-local-writes").getMessage());
        assertEquals("--json with --start needs --dry-run",
            usageError("--start", "--mirror", "dr", "--topics", "a", "--json").getMessage());
        assertEquals("--json cannot be used with --pause",
            usageError("--pause", "--mirror", "dr", "--topics", "a", "--json").getMessage());
        assertEquals("--topics cannot be used with --create",
            usageError("--create", "--mirror", "dr", "--mirror-config", "f", "--topics", "a").getMessage());
        assertEquals("--mirror-config cannot be used with --stop",
            usageError("--stop", "--mirror", "dr", "--topics", "a", "--mirror-config", "f").getMessage());
        assertEquals("--exclude cannot be used with --describe",
            usageError("--describe", "--exclude", "a").getMessage());
        assertEquals("--topics cannot be used with --delete",
            usageError("--delete", "--mirror", "dr", "--topics", "a").getMessage());
    }

    @Test
    void actionsAreExactlyOne() {
        UsageException none = assertThrows(UsageException.class,
            () -> CommandOptions.parse("--bootstrap-server", "dest:9092", "--mirror", "dr"));
        assertEquals("one of the arguments --create --delete --list --describe --start --stop --pause --resume --recover --apply-held "
            + "--reject-held --verify --alter is required", none.getMessage());
        assertEquals(GENERAL_USAGE, none.usage());
        assertEquals("argument --stop: not allowed with argument --start",
            usageError("--start", "--stop", "--mirror", "dr", "--topics", "a").getMessage());
    }

    @Test
    void bootstrapServerIsRequired() {
        UsageException e = assertThrows(UsageException.class, () -> CommandOptions.parse("--list"));
        assertEquals("argument --bootstrap-server is required", e.getMessage());
        assertEquals(GENERAL_USAGE, e.usage());
    }

    @Test
    void badValues() {
        assertEquals("--topics needs at least one topic name or regular expression",
            usageError("--start", "--mirror", "dr", "--topics", " , ").getMessage());
        assertEquals("--topics: 'b[' is not a valid regular expression (missing closing ]; backreferences and lookaround "
            + "are not supported)", usageError("--start", "--mirror", "dr", "--topics", "a,b[").getMessage());
        assertEquals("--exclude: '*' is not a valid regular expression (missing argument to repetition operator; "
            + "backreferences and lookaround are not supported)",
            usageError("--pause", "--mirror", "dr", "--topics", "a", "--exclude", "*").getMessage());
        assertTrue(usageError("--start", "--mirror", "dr", "--topics", "(?=orders).*").getMessage()
            .startsWith("--topics: '(?=orders).*' is not a valid regular expression (invalid or unsupported Perl syntax"));
        assertEquals("--mirror needs a non-empty name", usageError("--delete", "--mirror", " ").getMessage());
        assertEquals("--timeout-ms must be a positive number of milliseconds, not 0",
            usageError("--list", "--timeout-ms", "0").getMessage());
        assertEquals("argument --timeout-ms: could not convert 'soon' to Integer (For input string: \"soon\")",
            usageError("--list", "--timeout-ms", "soon").getMessage());
        assertEquals("unrecognized arguments: '--frob'", usageError("--list", "--frob").getMessage());
    }

    @Test
    void unreadableFilesAreUsageErrors() {
        Path missing = dir.resolve("missing.properties");
        assertEquals("--mirror-config file '" + missing + "' cannot be read (NoSuchFileException: " + missing + ")",
            usageError("--create", "--mirror", "dr", "--mirror-config", missing.toString()).getMessage());
        assertEquals("--command-config file '" + missing + "' cannot be read (NoSuchFileException: " + missing + ")",
            usageError("--list", "--command-config", missing.toString()).getMessage());
    }

    @Test
    void helpDocumentsEveryOptionAndActionWithAnExample() {
        assertTrue(CommandOptions.isHelpRequested("--list", "--help"));
        assertTrue(CommandOptions.isHelpRequested("-h"));
        assertFalse(CommandOptions.isHelpRequested("--list"));
        String help = CommandOptions.helpText();
        List<String> flags = new ArrayList<>(List.of("--bootstrap-server HOST:PORT", "--command-config FILE",
            "--timeout-ms MS", "--mirror NAME", "--mirror-config FILE", "--topics CSV", "--exclude CSV", "--json",
            "--help"));
        for (Action action : Action.values()) {
            flags.add(action.flag());
        }
        for (String flag : flags) {
            String entry = help.substring(help.indexOf("\n  " + flag + "\n"));
            String[] lines = entry.split("\n");
            assertTrue(lines[2].startsWith("      "), flag + " has a description");
            assertTrue(entry.contains("\n      Example: "), flag + " has an example");
        }
        for (String line : help.split("\n")) {
            assertTrue(line.length() <= 110, "help lines stay short: " + line);
        }
    }
}
