package io.clustermirror.chaos;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.LongSummaryStatistics;
import java.util.Map;

/**
 * Writes a run's report to a directory: {@code report.json} (machine-readable: seed, the seeded plan, the faults as applied, checks,
 * per-partition figures, violations, events) and {@code report.md} (the same for people), both naming the first
 * violation and the command that replays the run.
 */
final class ChaosReport {
    private ChaosReport() {
    }

    /** Writes both files and returns the markdown. */
    static String write(ChaosRun.Result result, Path dir) throws IOException {
        Files.createDirectories(dir);
        Map<String, Object> json = toJson(result);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(dir.resolve("report.json").toFile(), json);
        String markdown = toMarkdown(result);
        Files.writeString(dir.resolve("report.md"), markdown, StandardCharsets.UTF_8);
        return markdown;
    }

    private static double seconds(long ms) {
        return Math.round(ms / 100.0) / 10.0;
    }

    static Map<String, Object> toJson(ChaosRun.Result result) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("version", 1);
        json.put("result", result.passed() ? "PASS" : "FAIL");
        json.put("seed", result.options().seed());
        json.put("durationSeconds", result.options().duration().toSeconds());
        json.put("sourceBrokers", result.options().sourceBrokers());
        json.put("injectCorruption", result.options().injectCorruption());
        json.put("replay", result.options().replayCommand());
        json.put("clusters", result.clusters());
        json.put("plan", result.plan().stream().map(f -> {
            Map<String, Object> fault = new LinkedHashMap<>();
            fault.put("index", f.index());
            fault.put("kind", f.kind().name());
            fault.put("atSeconds", seconds(f.atMs()));
            fault.put("durationSeconds", seconds(f.durationMs()));
            fault.put("delayMs", f.delayMs());
            fault.put("pick", f.pick());
            return fault;
        }).toList());
        List<Map<String, Object>> faults = new ArrayList<>();
        for (ChaosRun.AppliedFault f : result.faults()) {
            Map<String, Object> fault = new LinkedHashMap<>();
            fault.put("index", f.planned().index());
            fault.put("kind", f.planned().kind().name());
            fault.put("plannedAtSeconds", seconds(f.planned().atMs()));
            fault.put("startedAtSeconds", seconds(f.startedAtMs()));
            fault.put("endedAtSeconds", seconds(f.endedAtMs()));
            fault.put("plannedDurationSeconds", seconds(f.planned().durationMs()));
            fault.put("delayMs", f.planned().delayMs());
            fault.put("target", f.target());
            fault.put("outcome", f.outcome());
            faults.add(fault);
        }
        json.put("faults", faults);
        Map<String, Object> checks = new LinkedHashMap<>();
        for (String check : HistoryChecker.CHECKS) {
            checks.put(check, result.history().violations().stream().filter(v -> v.check().equals(check)).count());
        }
        Map<String, Object> checkFigures = new LinkedHashMap<>();
        checkFigures.put("violationsByCheck", checks);
        checkFigures.put("identityChecks", result.identityChecks());
        checkFigures.put("replicaBatchesCompared", result.batchesCompared());
        checkFigures.put("writes", result.totalWrites());
        checkFigures.put("extensionErrorLinesByNode", result.extensionErrorLines());
        json.put("checks", checkFigures);
        List<Map<String, Object>> partitions = new ArrayList<>();
        for (ChaosRun.PartitionFigures p : result.partitions()) {
            Map<String, Object> partition = new LinkedHashMap<>();
            partition.put("partition", p.partition().toString());
            partition.put("desiredState", p.desired().name());
            partition.put("state", p.state().name());
            partition.put("sourceEndOffset", p.sourceEnd());
            partition.put("destinationEndOffset", p.destinationEnd());
            partition.put("barrierOffset", p.barrierOffset());
            partition.put("truncatedFromOffset", p.truncatedFrom());
            partition.put("truncatedToOffset", p.truncatedTo());
            partition.put("lastError", p.lastError());
            partition.put("ackedWrites", p.writes().acked());
            partition.put("abortedWrites", p.writes().aborted());
            partition.put("ackedOnDestination", p.writes().present());
            partition.put("lostInTruncatedRange", p.writes().lostInTruncatedRange());
            partition.put("lostBeyondMirroredEnd", p.writes().lostBeyondMirroredEnd());
            partition.put("duplicates", p.writes().duplicates());
            partition.put("lostBySource", p.writes().lostBySource());
            partition.put("deletedByRetention", p.writes().deletedByRetention());
            partitions.add(partition);
        }
        json.put("partitions", partitions);
        json.put("cyclesCompleted", result.cycles().size());
        json.put("cycles", result.cycles().stream().map(c -> {
            Map<String, Object> cycle = new LinkedHashMap<>();
            cycle.put("index", c.index());
            cycle.put("startedAtSeconds", seconds(c.startedAtMs()));
            cycle.put("tookSeconds", seconds(c.endedAtMs() - c.startedAtMs()));
            cycle.put("steps", c.steps().stream().map(step -> {
                Map<String, Object> figures = new LinkedHashMap<>();
                figures.put("step", step.step().name());
                if (step.step().stop) {
                    figures.put("planned", step.planned());
                    figures.put("consistent", step.consistent());
                    figures.put("splitTransactions", step.splitTransactions());
                }
                figures.put("startedAtSeconds", seconds(step.startedAtMs()));
                figures.put("tookSeconds", seconds(step.tookMs()));
                figures.put("partitions", step.partitions().stream().map(cut -> {
                    Map<String, Object> partition = new LinkedHashMap<>();
                    partition.put("partition", cut.partition());
                    partition.put("barrierOffset", cut.barrier());
                    partition.put("truncatedFromOffset", cut.truncatedFrom());
                    partition.put("truncatedToOffset", cut.truncatedTo());
                    return partition;
                }).toList());
                if (step.step().stop) {
                    figures.put("ackedWrites", step.writes().acked());
                    figures.put("ackedOnNowWritableSide", step.writes().present());
                    figures.put("lostInTruncatedRange", step.writes().lostInTruncatedRange());
                    figures.put("lostBeyondMirroredEnd", step.writes().lostBeyondMirroredEnd());
                    figures.put("duplicates", step.writes().duplicates());
                }
                return figures;
            }).toList());
            return cycle;
        }).toList());
        json.put("firstViolation", result.history().violations().stream().findFirst().map(ChaosReport::violation).orElse(null));
        json.put("violations", result.history().violations().stream().map(ChaosReport::violation).toList());
        json.put("events", result.history().events().stream().map(e -> {
            Map<String, Object> event = new LinkedHashMap<>();
            event.put("atSeconds", seconds(e.atMs()));
            event.put("kind", e.kind());
            event.put("detail", e.detail());
            return event;
        }).toList());
        return json;
    }

    /** The cycles' summary: how many, how long, what the stops cut and lost; then one line per cycle. */
    private static void appendCycles(StringBuilder md, List<FailoverCycles.Cycle> cycles) {
        md.append("\n## Failover/failback cycles\n\n").append(cycles.size()).append(" completed");
        if (cycles.isEmpty()) {
            md.append(".\n");
            return;
        }
        LongSummaryStatistics took = cycles.stream().mapToLong(c -> c.endedAtMs() - c.startedAtMs()).summaryStatistics();
        List<FailoverCycles.StepFigures> stops = cycles.stream().flatMap(c -> c.steps().stream()).filter(s -> s.step().stop).toList();
        md.append("; a cycle took ").append(seconds(took.getMin())).append(" to ").append(seconds(took.getMax())).append(" s (mean ")
            .append(seconds((long) took.getAverage())).append(" s); the stops checked ").append(stops.stream().mapToLong(s -> s.writes().acked()).sum())
            .append(" acknowledged writes: ").append(stops.stream().mapToLong(s -> s.writes().present()).sum()).append(" on the side made writable, ")
            .append(stops.stream().mapToLong(s -> s.writes().lostInTruncatedRange()).sum()).append(" lost in a truncated range, ")
            .append(stops.stream().mapToLong(s -> s.writes().lostBeyondMirroredEnd()).sum()).append(" beyond the mirrored end; ")
            .append(stops.stream().filter(FailoverCycles.StepFigures::planned).count()).append(" of the ").append(stops.size())
            .append(" stops were planned (marked *planned*: producers stopped first, `--stop --planned`), ")
            .append(stops.stream().filter(FailoverCycles.StepFigures::consistent).count()).append(" consistent (marked *consistent*: ")
            .append("`--stop --consistent`); the plain stops split ")
            .append(stops.stream().filter(st -> !st.planned() && !st.consistent()).mapToLong(FailoverCycles.StepFigures::splitTransactions).sum())
            .append(" committed transaction(s) over two partitions, the others ")
            .append(stops.stream().filter(st -> st.planned() || st.consistent()).mapToLong(FailoverCycles.StepFigures::splitTransactions).sum())
            .append(".\n\n")
            .append("| cycle | started (s) | took (s) | failover (barrier, cut) | failback cut | return (barrier, cut) | restart cut |\n")
            .append("|---:|---:|---:|---|---|---|---|\n");
        for (FailoverCycles.Cycle c : cycles) {
            md.append("| ").append(c.index()).append(" | ").append(seconds(c.startedAtMs())).append(" | ").append(seconds(c.endedAtMs() - c.startedAtMs()));
            for (FailoverCycles.StepFigures step : c.steps()) {
                md.append(" | ").append(step.planned() ? "*planned* " : "").append(step.consistent() ? "*consistent* " : "")
                    .append(String.join(", ", step.partitions().stream().map(p -> "p" + p.partition() + (p.barrier() >= 0 ? " @" + p.barrier() : "")
                    + (p.truncatedFrom() >= 0 ? " [" + p.truncatedFrom() + ", " + p.truncatedTo() + ")" : "")).toList()));
            }
            md.append(" |\n");
        }
    }

    private static Map<String, Object> violation(History.Violation v) {
        Map<String, Object> violation = new LinkedHashMap<>();
        violation.put("atSeconds", seconds(v.atMs()));
        violation.put("check", v.check());
        violation.put("where", v.where());
        violation.put("detail", v.detail());
        return violation;
    }

    static String toMarkdown(ChaosRun.Result result) {
        StringBuilder md = new StringBuilder();
        ChaosRun.Options options = result.options();
        md.append("# Chaos run, seed ").append(options.seed()).append(": ").append(result.passed() ? "PASS" : "FAIL").append("\n\n");
        md.append("- faults for ").append(options.duration().toSeconds()).append(" s; replay: `").append(options.replayCommand()).append("`\n");
        result.clusters().forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("- ").append(result.totalWrites()).append(" writes recorded; ").append(result.identityChecks())
            .append(" identity checks of a partition, ").append(result.batchesCompared()).append(" replica batches compared\n");
        md.append("- ERROR lines in cluster-mirror.log (logged and recovered from): ").append(result.extensionErrorLines()).append("\n\n");
        if (!result.passed()) {
            History.Violation first = result.history().violations().get(0);
            md.append("## First violation\n\n").append("**").append(first.check()).append("** at ").append(first.where()).append(" (t=")
                .append(seconds(first.atMs())).append(" s): ").append(first.detail()).append("\n\nReplay: `").append(options.replayCommand())
                .append("`\n\n");
        }
        md.append("## Faults\n\n").append(result.faults().size()).append(" of the ").append(result.plan().size())
            .append(" planned faults applied (each waits for the one before to heal; random faults not started when the duration was over are "
                + "left out).\n\n")
            .append("| # | planned (s) | started (s) | ended (s) | fault | target | outcome |\n|---:|---:|---:|---:|---|---|---|\n");
        for (ChaosRun.AppliedFault f : result.faults()) {
            md.append("| ").append(f.planned().index()).append(" | ").append(seconds(f.planned().atMs())).append(" | ").append(seconds(f.startedAtMs()))
                .append(" | ").append(seconds(f.endedAtMs())).append(" | ").append(f.planned().kind())
                .append(f.planned().delayMs() > 0 ? " " + f.planned().delayMs() + " ms" : "").append(" | ").append(f.target()).append(" | ")
                .append(f.outcome()).append(" |\n");
        }
        md.append("\n## Checks\n\n| check | violations |\n|---|---:|\n");
        for (String check : HistoryChecker.CHECKS) {
            md.append("| ").append(check).append(" | ").append(result.history().violations().stream().filter(v -> v.check().equals(check)).count())
                .append(" |\n");
        }
        md.append("\n## Partitions\n\n| partition | requested | state | source end | destination end | barrier | truncated | acked | aborted "
            + "| acked on destination | lost in truncated range | lost beyond mirrored end | duplicates | lost by the source "
            + "| deleted by retention |\n"
            + "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (ChaosRun.PartitionFigures p : result.partitions()) {
            md.append("| ").append(p.partition()).append(" | ").append(p.desired()).append(" | ").append(p.state()).append(" | ").append(p.sourceEnd())
                .append(" | ").append(p.destinationEnd()).append(" | ").append(p.barrierOffset() < 0 ? "-" : p.barrierOffset()).append(" | ")
                .append(p.truncatedFrom() < 0 ? "-" : "[" + p.truncatedFrom() + ", " + p.truncatedTo() + ")").append(" | ")
                .append(p.writes().acked()).append(" | ").append(p.writes().aborted()).append(" | ").append(p.writes().present()).append(" | ")
                .append(p.writes().lostInTruncatedRange()).append(" | ").append(p.writes().lostBeyondMirroredEnd()).append(" | ")
                .append(p.writes().duplicates()).append(" | ").append(p.writes().lostBySource()).append(" | ")
                .append(p.writes().deletedByRetention()).append(" |\n");
        }
        appendCycles(md, result.cycles());
        if (!result.passed()) {
            md.append("\n## Violations\n\n");
            result.history().violations().stream().limit(50).forEach(v -> md.append("- ").append(v).append('\n'));
        }
        md.append("\n## Events\n\n");
        result.history().events().forEach(e -> md.append("- ").append(seconds(e.atMs())).append(" s ").append(e.kind()).append(": ")
            .append(e.detail()).append('\n'));
        return md.toString();
    }
}
