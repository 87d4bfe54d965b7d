package io.clustermirror.bench;

import java.nio.charset.StandardCharsets;
import java.util.Random;

/** 1 KiB record values of word-like text (compressible about like log lines), from a fixed seed. */
final class Payloads {
    static final int RECORD_SIZE = 1024;
    private static final String[] WORDS = ("order payment customer status shipped pending id amount currency "
        + "EUR USD region eu-west us-east timestamp user session click view cart checkout item sku price "
        + "quantity warehouse true false null error retry latency ms bytes host service version").split(" ");
    private static byte[][] pool;

    private Payloads() {
    }

    static synchronized byte[][] pool() {
        if (pool == null) {
            Random rnd = new Random(42);
            pool = new byte[4096][];
            for (int i = 0; i < pool.length; i++) {
                StringBuilder sb = new StringBuilder(RECORD_SIZE + 32);
                while (sb.length() < RECORD_SIZE) {
                    sb.append(WORDS[rnd.nextInt(WORDS.length)]).append(rnd.nextBoolean() ? '=' : ' ');
                    if (rnd.nextInt(4) == 0) {
                        sb.append(rnd.nextInt(1_000_000)).append(' ');
                    }
                }
                pool[i] = sb.substring(0, RECORD_SIZE).getBytes(StandardCharsets.US_ASCII);
            }
        }
        return pool;
    }
}
