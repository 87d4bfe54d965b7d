package io.clustermirror.it;

import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Gives a test class its {@link ClusterPair}, started once before the class's {@code @BeforeAll} methods (or before each
 * invocation of a parameterized class, see {@link #topologies}), shared by its tests and closed after its
 * {@code @AfterAll} methods. The class receives it in every static field of type
 * {@code ClusterPair} and as a parameter of type {@code ClusterPair} of its lifecycle and test methods.
 *
 * <p>The clusters are an in-JVM source of {@link #sourceBrokers} brokers named {@link #source} and an in-JVM destination of
 * {@link #destinationBrokers} brokers named {@link #destination}; or, with {@link #topologies}, what a static method of
 * the class returns, for clusters the attributes cannot describe (launched nodes, listeners, configs made at run time).
 * The field's or parameter's type arguments must be the back ends the topologies' launch modes name.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@ExtendWith(MirrorClusterExtension.class)
@interface MirrorClusterTest {
    /** The in-JVM source's name (in logs and directories); with {@link #topologies}, unused. */
    String source() default "source";

    int sourceBrokers() default 1;

    /** The in-JVM destination's name; with {@link #topologies}, unused. */
    String destination() default "destination";

    int destinationBrokers() default 1;

    /**
     * The name of a static method of the test class (or a superclass) that returns the pair's
     * {@link ClusterPair.Topologies}; it runs first, so it may also prepare what the clusters need (keystores, a log
     * capture that must see them start). Without parameters it runs once for the class; a {@code @ParameterizedClass}'s
     * method may take the class's first parameters, and then runs for each invocation, whose pair is closed after it.
     * Empty: the attributes describe the pair.
     */
    String topologies() default "";
}
