package io.clustermirror.it;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.Property;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Keeps every line this JVM logs (as the test's log4j2 configuration lets through) while open, as
 * {@code LEVEL logger message}, with the message and class of any exception appended.
 */
final class LogCapture implements AutoCloseable {
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final AbstractAppender appender;

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
        LogCapture capture = new LogCapture();
        capture.appender.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        config.getRootLogger().addAppender(capture.appender, Level.ALL, null);
        context.updateLoggers();
        return capture;
    }

    List<String> lines() {
        return List.copyOf(lines);
    }

    @Override
    public void close() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().removeAppender(appender.getName());
        context.updateLoggers();
        appender.stop();
    }
}
