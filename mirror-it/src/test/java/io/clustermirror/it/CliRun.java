package io.clustermirror.it;

import io.clustermirror.admin.cli.ClusterMirrorsCommand;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What one run of the command line tool ({@code kafka-cluster-mirrors.sh}) printed and returned. */
record CliRun(int exit, String out, String err) {
    /** Runs the tool in this JVM against the destination cluster at {@code bootstrapServers}. */
    static CliRun run(String bootstrapServers, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = bootstrapServers;
        System.arraycopy(args, 0, all, 2, args.length);
        int exit = ClusterMirrorsCommand.mainNoExit(all, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        return new CliRun(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
