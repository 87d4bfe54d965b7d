package io.clustermirror.it;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

import java.util.List;
import java.util.function.BiFunction;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Keeps every line this JVM logs (as the test's log4j2 configuration lets through) while open, as
 * {@code LEVEL logger message}, with the message and class of any exception appended.
 */
final class LogCapture implements AutoCloseable {
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final AbstractAppender appender;
    /** Takes the appender out of the logging configuration. */
    private Runnable detach;

    private LogCapture() {
        appender = new AbstractAppender("log-capture-" + System.identityHashCode(this), null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                Throwable thrown = event.getThrown();
                lines.add(event.getLevel() + " " + event.getLoggerName() + " " + event.getMessage().getFormattedMessage()
                    + (thrown == null ? "" : " " + thrown));
            }
        };
    }

    static LogCapture start() {
        return attach((config, appender) -> {
            config.getRootLogger().addAppender(appender, Level.ALL, null);
            return () -> config.getRootLogger().removeAppender(appender.getName());
        });
    }

    /**
     * Keeps the lines of one logger (e.g. {@code kafka.authorizer.logger}) down to {@code level}, whatever the test's
     * configuration says, without passing them on to its other appenders.
     */
    static LogCapture logger(String name, Level level) {
        return attach((config, appender) -> {
            LoggerConfig logger = new LoggerConfig(name, level, false);
            logger.addAppender(appender, level, null);
            config.addLogger(name, logger);
            return () -> config.removeLogger(name);
        });
    }

    /** Starts a capture that {@code install} adds to the configuration; it returns how to take it out again. */
    private static LogCapture attach(BiFunction<Configuration, Appender, Runnable> install) {
        LogCapture capture = new LogCapture();
        capture.appender.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        capture.detach = install.apply(context.getConfiguration(), capture.appender);
        context.updateLoggers();
        return capture;
    }

    List<String> lines() {
        return List.copyOf(lines);
    }

    @Override
    public void close() {
        detach.run();
        ((LoggerContext) LogManager.getContext(false)).updateLoggers();
        appender.stop();
    }
}
