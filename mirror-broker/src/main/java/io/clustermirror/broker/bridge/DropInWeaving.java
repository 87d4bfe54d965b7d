package io.clustermirror.broker.bridge;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

import java.lang.instrument.Instrumentation;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * The drop-in way in: a Java agent weaves advice into stock Kafka's own start-up path, so that a node started by
 * Kafka's scripts ({@code kafka.Kafka server.properties}) gets from {@link Hooks} what the launcher gives it: its
 * server properties before Kafka reads them, its {@code BrokerServer} before and after its start-up, and both edges of
 * its shutdown.
 *
 * <p>Woven (advice only: no class format change, so nothing else of Kafka's behaviour moves):
 * <ul>
 *   <li>{@code kafka.Kafka$.buildServer(Properties)}: on entry {@link Hooks#configuring}; on exit the check that the
 *       node's {@code BrokerServer} was woven too, so that a node whose broker the agent could not reach refuses to
 *       start instead of running without the extension;</li>
 *   <li>{@code kafka.server.BrokerServer.startup()}: on entry {@link Hooks#brokerStarting}; on normal exit (broker
 *       unfenced, listeners serving) {@link Hooks#brokerStarted};</li>
 *   <li>{@code kafka.server.BrokerServer.shutdown(Duration)}: on entry {@link Hooks#brokerShuttingDown}, on exit
 *       {@link Hooks#brokerShutDown};</li>
 *   <li>{@code kafka.server.ControllerServer.startup()} and {@code shutdown()}: on normal exit of the first
 *       {@link Hooks#controllerStarted}, on exit of the second {@link Hooks#controllerShutDown}.</li>
 * </ul>
 *
 * <p>The hooks engage only in a JVM whose {@code buildServer} ran, that is one started as {@code kafka.Kafka}: Kafka's
 * other tools started with the same {@code KAFKA_OPTS}, and the launcher (which attaches by itself), are left alone.
 * The advice is inlined into Kafka's classes, which is why the dispatch methods here are public; the agent must be
 * given at JVM start ({@code -javaagent}), before those classes load.
 */
public final class DropInWeaving {
    static final String KAFKA_MAIN = "kafka.Kafka$";
    static final String BROKER_SERVER = "kafka.server.BrokerServer";
    static final String CONTROLLER_SERVER = "kafka.server.ControllerServer";

    /** What the agent does at each point of the node's life. Exceptions thrown by a hook propagate into Kafka. */
    public interface Hooks {
        /** Before Kafka builds the node's config from {@code serverProps}: may change them, or throw to refuse to start. */
        void configuring(Properties serverProps);

        /** The broker is about to start; throwing makes Kafka shut the node down and exit. */
        void brokerStarting(BrokerHandle broker);

        /** The broker has started; throwing makes Kafka shut the node down and exit. */
        void brokerStarted(BrokerHandle broker);

        /** The broker is about to shut down (controlled shutdown, then its components). */
        void brokerShuttingDown(BrokerHandle broker);

        /** The broker has shut down. */
        void brokerShutDown(BrokerHandle broker);

        /** The node's controller has started (also on a combined node). */
        void controllerStarted(Object controllerServer);

        /** The node's controller has shut down. */
        void controllerShutDown(Object controllerServer);
    }

    private static final AtomicReference<Hooks> HOOKS = new AtomicReference<>();
    /** Set once {@code buildServer} ran: this JVM is a node started as {@code kafka.Kafka}. */
    private static volatile boolean engaged;
    private static final AtomicBoolean BROKER_WOVEN = new AtomicBoolean();
    private static final AtomicReference<String> WEAVING_ERROR = new AtomicReference<>();

    private DropInWeaving() {
    }

    /**
     * Installs the weaving; call from the agent's {@code premain}, which runs before {@code kafka.Kafka}'s main.
     *
     * @throws IllegalStateException if called twice (the agent was given twice)
     */
    public static void install(Instrumentation instrumentation, Hooks hooks) {
        if (!HOOKS.compareAndSet(null, hooks)) {
            throw new IllegalStateException("The Cluster Mirror agent is installed twice: give -javaagent once");
        }
        new AgentBuilder.Default()
            .disableClassFormatChanges()
            .with(new AgentBuilder.Listener.Adapter() {
                @Override
                public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded,
                                             DynamicType dynamicType) {
                    if (type.getName().equals(BROKER_SERVER)) {
                        BROKER_WOVEN.set(true);
                    }
                }

                @Override
                public void onError(String typeName, ClassLoader loader, JavaModule module, boolean loaded, Throwable error) {
                    WEAVING_ERROR.compareAndSet(null, typeName + ": " + error);
                }
            })
            .type(named(KAFKA_MAIN))
            .transform((builder, type, loader, module, domain) ->
                builder.visit(Advice.to(BuildServerAdvice.class).on(named("buildServer").and(takesArguments(Properties.class)))))
            .type(named(BROKER_SERVER))
            .transform((builder, type, loader, module, domain) -> builder
                .visit(Advice.to(StartupAdvice.class).on(named("startup").and(takesArguments(0))))
                .visit(Advice.to(ShutdownAdvice.class).on(named("shutdown").and(takesArguments(Duration.class)))))
            .type(named(CONTROLLER_SERVER))
            .transform((builder, type, loader, module, domain) -> builder
                .visit(Advice.to(ControllerStartupAdvice.class).on(named("startup").and(takesArguments(0))))
                .visit(Advice.to(ControllerShutdownAdvice.class).on(named("shutdown").and(takesArguments(0)))))
            .installOn(instrumentation);
    }

    /** Called from the advice on entry of {@code kafka.Kafka$.buildServer}. */
    public static void configuring(Properties serverProps) {
        engaged = true;
        HOOKS.get().configuring(serverProps);
    }

    /** Called from the advice on exit of {@code kafka.Kafka$.buildServer}: the node's classes are loaded (and woven) now. */
    public static void serverBuilt(Properties serverProps) {
        String error = WEAVING_ERROR.get();
        if (error != null) {
            throw new IllegalStateException("The Cluster Mirror agent could not weave Kafka " + KafkaSupport.running() + " ("
                + error + "): it supports the Kafka lines " + KafkaSupport.supportedLines());
        }
        if (serverProps.getProperty("process.roles", "").contains("broker") && !BROKER_WOVEN.get()) {
            throw new IllegalStateException("The Cluster Mirror agent did not reach " + BROKER_SERVER + " of Kafka "
                + KafkaSupport.running() + ": it supports the Kafka lines " + KafkaSupport.supportedLines());
        }
    }

    /** Called from the advice on entry of {@code BrokerServer.startup()}. */
    public static void brokerStarting(Object brokerServer) {
        if (engaged) {
            HOOKS.get().brokerStarting(BrokerHandle.of(brokerServer));
        }
    }

    /** Called from the advice on normal exit of {@code BrokerServer.startup()}. */
    public static void brokerStarted(Object brokerServer) {
        if (engaged) {
            HOOKS.get().brokerStarted(BrokerHandle.of(brokerServer));
        }
    }

    /** Called from the advice on entry of {@code BrokerServer.shutdown(Duration)}. */
    public static void brokerShuttingDown(Object brokerServer) {
        if (engaged) {
            HOOKS.get().brokerShuttingDown(BrokerHandle.of(brokerServer));
        }
    }

    /** Called from the advice on exit of {@code BrokerServer.shutdown(Duration)}, however it ended. */
    public static void brokerShutDown(Object brokerServer) {
        if (engaged) {
            HOOKS.get().brokerShutDown(BrokerHandle.of(brokerServer));
        }
    }

    /** Called from the advice on normal exit of {@code ControllerServer.startup()}. */
    public static void controllerStarted(Object controllerServer) {
        if (engaged) {
            HOOKS.get().controllerStarted(controllerServer);
        }
    }

    /** Called from the advice on exit of {@code ControllerServer.shutdown()}, however it ended. */
    public static void controllerShutDown(Object controllerServer) {
        if (engaged) {
            HOOKS.get().controllerShutDown(controllerServer);
        }
    }

    /** Inlined into {@code kafka.server.ControllerServer.startup()}; runs on normal return only. */
    public static final class ControllerStartupAdvice {
        private ControllerStartupAdvice() {
        }

        @Advice.OnMethodExit
        public static void exit(@Advice.This Object controllerServer) {
            controllerStarted(controllerServer);
        }
    }

    /** Inlined into {@code kafka.server.ControllerServer.shutdown()}. */
    public static final class ControllerShutdownAdvice {
        private ControllerShutdownAdvice() {
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        public static void exit(@Advice.This Object controllerServer) {
            controllerShutDown(controllerServer);
        }
    }

    /** Inlined into {@code kafka.Kafka$.buildServer(Properties)}. */
    public static final class BuildServerAdvice {
        private BuildServerAdvice() {
        }

        @Advice.OnMethodEnter
        public static void enter(@Advice.Argument(0) Properties serverProps) {
            configuring(serverProps);
        }

        @Advice.OnMethodExit
        public static void exit(@Advice.Argument(0) Properties serverProps) {
            serverBuilt(serverProps);
        }
    }

    /** Inlined into {@code kafka.server.BrokerServer.startup()}; its exit runs on normal return only. */
    public static final class StartupAdvice {
        private StartupAdvice() {
        }

        @Advice.OnMethodEnter
        public static void enter(@Advice.This Object brokerServer) {
            brokerStarting(brokerServer);
        }

        @Advice.OnMethodExit
        public static void exit(@Advice.This Object brokerServer) {
            brokerStarted(brokerServer);
        }
    }

    /** Inlined into {@code kafka.server.BrokerServer.shutdown(Duration)}. */
    public static final class ShutdownAdvice {
        private ShutdownAdvice() {
        }

        @Advice.OnMethodEnter
        public static void enter(@Advice.This Object brokerServer) {
            brokerShuttingDown(brokerServer);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        public static void exit(@Advice.This Object brokerServer) {
            brokerShutDown(brokerServer);
        }
    }
}
