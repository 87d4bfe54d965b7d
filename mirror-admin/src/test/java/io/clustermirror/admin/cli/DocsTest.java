package io.clustermirror.admin.cli;

import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The documentation against the code it describes: a README a person reads (short, linking every guide), links that
 * lead somewhere, every CLI option and error code documented, and the reference table of mirror configs complete, with
 * nothing documented that does not exist. The lists come from the code itself (the tool's options and actions, {@link MirrorConfig#KNOWN_MIRROR_KEYS},
 * {@link MirrorError}); the metrics are checked against a running broker by mirror-it's MonitoringConfigTest.
 */
class DocsTest {
    private static final int README_MAX_LINES = 200;
    private static final Path CHECKOUT = checkout();
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");

    private static Path checkout() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.exists(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs")))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("no checkout (README.md and docs/) above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    /** The pages a reader can reach: the README, the guides under docs/, CONTRIBUTING and CHANGELOG, by path. */
    private static Map<Path, String> pages() {
        Map<Path, String> pages = new LinkedHashMap<>();
        for (String root : List.of("README.md", "CONTRIBUTING.md", "CHANGELOG.md")) {
            pages.put(CHECKOUT.resolve(root), read(CHECKOUT.resolve(root)));
        }
        guides().forEach(guide -> pages.put(guide, read(guide)));
        return pages;
    }

    private static List<Path> guides() {
        try (Stream<Path> files = Files.list(CHECKOUT.resolve("docs"))) {
            return files.filter(f -> f.toString().endsWith(".md")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'. */
    static String anchor(String heading) {
        return heading.trim().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
    }

    private static Set<String> anchors(String markdown) {
        Set<String> anchors = new TreeSet<>();
        boolean fenced = false;
        for (String line : markdown.split("\n")) {
            fenced ^= line.startsWith("```");
            Matcher m = HEADING.matcher(line);
            if (!fenced && m.matches()) {
                anchors.add(anchor(m.group(1)));
            }
        }
        return anchors;
    }

    @Test
    void theReadmeIsShortAndLinksEveryGuide() {
        String readme = read(CHECKOUT.resolve("README.md"));
        long lines = readme.lines().count();
        assertTrue(lines <= README_MAX_LINES, "README.md has " + lines + " lines; guides under docs/ take the rest");
        List<String> unlinked = new ArrayList<>();
        for (Path page : Stream.concat(guides().stream(), Stream.of(CHECKOUT.resolve("CONTRIBUTING.md"))).toList()) {
            String relative = CHECKOUT.relativize(page).toString();
            if (!readme.contains("](" + relative + ")") && !readme.contains("](" + relative + "#")) {
                unlinked.add(relative);
            }
        }
        assertEquals(List.of(), unlinked, "pages the README does not link");
    }

    @Test
    void everyLinkLeadsToAFileAndAHeadingThatExist() {
        List<String> broken = new ArrayList<>();
        pages().forEach((page, text) -> {
            Matcher link = LINK.matcher(text);
            while (link.find()) {
                String target = link.group(1);
                if (target.matches("^[a-z]+:.*")) {
                    continue; // https:, mailto:
                }
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(CHECKOUT.relativize(page) + ": " + target + " (no such file)");
                } else if (hash >= 0 && resolved.toString().endsWith(".md")
                        && !anchors(read(resolved)).contains(target.substring(hash + 1))) {
                    broken.add(CHECKOUT.relativize(page) + ": " + target + " (no such heading)");
                }
            }
        });
        assertEquals(List.of(), broken, "broken links");
    }

    /** Every option and action of the tool is documented, and a tool line of the docs uses only those. */
    @Test
    void theToolsOptionsAreDocumentedAndExist() {
        Set<String> flags = new TreeSet<>(CommandOptions.optionFlags());
        Arrays.stream(Action.values()).map(Action::flag).forEach(flags::add);
        String docs = String.join("\n", pages().values());
        Set<String> undocumented = flags.stream().filter(f -> !Pattern.compile("(?<![\\w-])" + f + "(?![\\w-])").matcher(docs).find())
            .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of(), undocumented, "options of kafka-cluster-mirrors.sh the docs never mention");
        Set<String> unknown = new TreeSet<>();
        Matcher flag = Pattern.compile("(?<![\\w-])--[a-z][a-z-]*[a-z](?![\\w>-])").matcher("");
        for (String line : docs.split("\n")) {
            if (line.contains("kafka-cluster-mirrors.sh") && !line.contains("kafka-topics.sh") && !line.contains("kafka-configs.sh")) {
                flag.reset(line);
                while (flag.find()) {
                    if (!flags.contains(flag.group())) {
                        unknown.add(flag.group());
                    }
                }
            }
        }
        assertEquals(Set.of(), unknown, "options the docs give kafka-cluster-mirrors.sh that it does not have");
    }

    /** The reference table of mirror configs lists exactly the mirror configs there are. */
    /**
     * Every tool command in the docs' code blocks (a line that starts with the script, {@code $D} standing for the
     * destination's {@code --bootstrap-server}) is one the tool accepts: a copied example never ends in a usage error.
     */
    @Test
    void everyToolCommandInTheDocsParses() {
        Map<String, String> refused = new LinkedHashMap<>();
        int commands = 0;
        for (Map.Entry<Path, String> page : pages().entrySet()) {
            for (String line : page.getValue().split("\n")) {
                String command = line.strip();
                if (!command.startsWith(TOOL)) {
                    continue;
                }
                commands++;
                List<String> args = shellWords(command.substring(TOOL.length()).replace("$D", "--bootstrap-server dest:9092")).stream()
                    .map(DocsTest::readableFile).toList();
                if (CommandOptions.isHelpRequested(args.toArray(String[]::new)) || args.equals(List.of("--version"))) {
                    continue;
                }
                try {
                    CommandOptions.parse(args.toArray(String[]::new));
                } catch (UsageException e) {
                    refused.put(CHECKOUT.relativize(page.getKey()) + ": " + command, e.getMessage());
                }
            }
        }
        assertTrue(commands >= 10, "the docs show the tool's commands: " + commands);
        assertEquals(Map.of(), refused, "commands in the docs that the tool refuses");
    }

    private static final String TOOL = "bin/kafka-cluster-mirrors.sh";

    /**
     * A properties file an example names, as the tool reads it: the checkout's own (config/mirror.properties), or an empty
     * file in place of one the reader writes (source-client.properties). Any other word as it is.
     */
    private static String readableFile(String word) {
        if (!word.endsWith(".properties")) {
            return word;
        }
        Path shipped = CHECKOUT.resolve(word);
        try {
            return Files.exists(shipped) ? shipped.toString() : Files.createTempFile("docs-example", ".properties").toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A shell line's words: quotes group and are dropped, a {@code #} outside quotes starts a comment. */
    static List<String> shellWords(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (char c : line.toCharArray()) {
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                word = word == null ? new StringBuilder() : word;
            } else if (Character.isWhitespace(c)) {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
            } else if (c == '#' && word == null) {
                break;
            } else {
                word = word == null ? new StringBuilder() : word;
                word.append(c);
            }
        }
        if (word != null) {
            words.add(word.toString());
        }
        return words;
    }

    /**
     * Every {@code cluster.mirror.*} setting of a node that the code reads is documented, and every one the docs name is
     * read (or lies under a prefix the code reads, such as {@code cluster.mirror.local.*}).
     */
    @Test
    void theNodesClusterMirrorSettingsAreDocumentedAndExist() {
        Set<String> read = new TreeSet<>();
        Pattern literal = Pattern.compile("\"(cluster\\.mirror\\.[a-z.]+)\"");
        try (Stream<Path> files = Files.walk(CHECKOUT)) {
            files.filter(f -> f.toString().endsWith(".java") && f.toString().contains("/src/main/java/")).forEach(f -> {
                Matcher m = literal.matcher(read(f));
                while (m.find()) {
                    read.add(m.group(1));
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        read.remove(VERSION_PROPERTY);
        assertTrue(read.size() >= 5, "the code reads the node's settings: " + read);
        String docs = String.join("\n", pages().values());
        Set<String> documented = new TreeSet<>();
        Matcher named = Pattern.compile("cluster\\.mirror\\.[a-z.]*[a-z*]").matcher(docs);
        while (named.find()) {
            documented.add(named.group());
        }
        Set<String> undocumented = read.stream().filter(k -> !documented.contains(k.endsWith(".") ? k + "*" : k))
            .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of(), undocumented, "settings the code reads that no page names");
        Set<String> unknown = documented.stream().filter(d -> !d.equals(FAMILY) && read.stream().noneMatch(k -> d.equals(k)
                || d.startsWith(k.endsWith(".") ? k : k + ".")))
            .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of(), unknown, "settings the docs name that the code does not read");
    }

    /** How the docs name all the node's settings at once. */
    private static final String FAMILY = "cluster.mirror.*";
    /** The key of the version in the jar's own version.properties, not a setting of a node. */
    private static final String VERSION_PROPERTY = "cluster.mirror.version";

    @Test
    void theMirrorConfigsTableListsExactlyTheMirrorConfigs() {
        String section = section(read(CHECKOUT.resolve("docs/operations.md")), "Mirror configs");
        Set<String> documented = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `([a-z][a-z.]*)` \\|").matcher(section);
        while (row.find()) {
            documented.add(row.group(1));
        }
        assertEquals(new TreeSet<>(MirrorConfig.KNOWN_MIRROR_KEYS.keySet()), documented,
            "the Mirror configs table of docs/operations.md and the mirror configs the validator accepts");
    }

    /** The text of a page's {@code ## title} section, up to the next one. */
    private static String section(String page, String title) {
        int start = page.indexOf("\n## " + title + "\n");
        assertTrue(start >= 0, "no section '" + title + "'");
        int end = page.indexOf("\n## ", start + 1);
        return page.substring(start, end < 0 ? page.length() : end);
    }

    /** The errors reference names every error code, and every code it names is ours or Kafka's. */
    @Test
    void theErrorsReferenceListsEveryErrorCode() {
        String errors = section(read(CHECKOUT.resolve("docs/monitoring.md")), "Errors");
        Set<String> codes = Arrays.stream(MirrorError.values()).map(Enum::name).filter(n -> !n.equals("NONE"))
            .collect(Collectors.toCollection(TreeSet::new));
        Set<String> undocumented = codes.stream().filter(c -> !errors.contains("`" + c + "`")).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of(), undocumented, "error codes docs/monitoring.md does not list");
        Set<String> kafkas = Arrays.stream(Errors.values()).map(Enum::name).collect(Collectors.toSet());
        Set<String> unknown = new TreeSet<>();
        Matcher named = Pattern.compile("`([A-Z][A-Z_]{3,})`").matcher(errors);
        while (named.find()) {
            if (!codes.contains(named.group(1)) && !kafkas.contains(named.group(1))) {
                unknown.add(named.group(1));
            }
        }
        assertEquals(Set.of(), unknown, "error codes docs/monitoring.md lists that neither Cluster Mirror nor Kafka has");
    }
}
