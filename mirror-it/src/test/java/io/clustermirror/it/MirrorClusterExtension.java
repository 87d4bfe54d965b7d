package io.clustermirror.it;

import io.clustermirror.testkit.MirrorTestCluster;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.params.support.ParameterInfo;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;
import org.junit.platform.commons.support.ReflectionSupport;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.Optional;

/**
 * The extension behind {@link MirrorClusterTest}: starts the class's {@link ClusterPair} before its {@code @BeforeAll}
 * methods (or, for a parameterized class whose topologies method takes the class's parameters, before each invocation),
 * keeps it in the extension store of the class (or invocation), which closes it (an {@link AutoCloseable}) once that is
 * done, and hands it to the class's static {@code ClusterPair} fields and {@code ClusterPair} parameters.
 */
final class MirrorClusterExtension implements BeforeAllCallback, BeforeClassTemplateInvocationCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(MirrorClusterExtension.class);

    /** Starts the class's pair, unless its topologies depend on the class's parameters: then each invocation starts its own. */
    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Class<?> testClass = context.getRequiredTestClass();
        MirrorClusterTest spec = spec(testClass);
        Optional<Method> factory = factory(testClass, spec);
        if (factory.isPresent() && factory.get().getParameterCount() > 0) {
            return;
        }
        start(context, factory.isPresent() ? (ClusterPair.Topologies) ReflectionSupport.invokeMethod(factory.get(), null)
            : ClusterPair.Topologies.of(
                MirrorTestCluster.builder().name(spec.source()).brokers(spec.sourceBrokers()).topology(),
                MirrorTestCluster.builder().name(spec.destination()).brokers(spec.destinationBrokers()).withExtension(true).topology()));
    }

    /**
     * Starts the pair of one invocation of a parameterized class whose topologies method takes the class's parameters;
     * the invocation's extension store closes it once the invocation is done.
     */
    @Override
    public void beforeClassTemplateInvocation(ExtensionContext context) throws Exception {
        Class<?> testClass = context.getRequiredTestClass();
        Optional<Method> factory = factory(testClass, spec(testClass));
        if (factory.isEmpty() || factory.get().getParameterCount() == 0) {
            return;
        }
        ParameterInfo parameters = ParameterInfo.get(context);
        if (parameters == null) {
            throw new IllegalStateException(factory.get() + " takes parameters but " + testClass + " is not a @ParameterizedClass");
        }
        Object[] arguments = new Object[factory.get().getParameterCount()];
        for (int i = 0; i < arguments.length; i++) {
            arguments[i] = parameters.getArguments().get(i);
        }
        start(context, (ClusterPair.Topologies) ReflectionSupport.invokeMethod(factory.get(), null, arguments));
    }

    /** Starts the pair, keeps it in {@code context}'s store (which closes it) and hands it to the static pair fields. */
    private static void start(ExtensionContext context, ClusterPair.Topologies topologies) throws Exception {
        ClusterPair<?, ?> pair = ClusterPair.start(topologies);
        context.getStore(NAMESPACE).put(ClusterPair.class, pair);
        Class<?> testClass = context.getRequiredTestClass();
        for (Field field : ReflectionSupport.findFields(testClass, MirrorClusterExtension::isPairField, HierarchyTraversalMode.TOP_DOWN)) {
            checkTypeArguments(field.getGenericType(), pair, field.toString());
            field.setAccessible(true);
            field.set(null, pair);
        }
    }

    private static MirrorClusterTest spec(Class<?> testClass) {
        return AnnotationSupport.findAnnotation(testClass, MirrorClusterTest.class)
            .orElseThrow(() -> new IllegalStateException(testClass + " is not annotated @MirrorClusterTest"));
    }

    private static boolean isPairField(Field field) {
        return Modifier.isStatic(field.getModifiers()) && field.getType() == ClusterPair.class;
    }

    /** The class's static method named by {@link MirrorClusterTest#topologies}, if the annotation names one. */
    private static Optional<Method> factory(Class<?> testClass, MirrorClusterTest spec) {
        if (spec.topologies().isEmpty()) {
            return Optional.empty();
        }
        Method factory = ReflectionSupport.findMethods(testClass, m -> m.getName().equals(spec.topologies()), HierarchyTraversalMode.BOTTOM_UP)
            .stream().filter(m -> Modifier.isStatic(m.getModifiers()) && m.getReturnType() == ClusterPair.Topologies.class).findFirst()
            .orElseThrow(() -> new IllegalStateException(testClass + " has no static method " + spec.topologies()
                + " returning ClusterPair.Topologies"));
        return Optional.of(factory);
    }

    /** Fails, naming {@code target}, unless {@code type}'s type arguments (if any) are the classes of the pair's clusters. */
    private static void checkTypeArguments(Type type, ClusterPair<?, ?> pair, String target) {
        if (!(type instanceof ParameterizedType parameterized)) {
            return;
        }
        Type[] arguments = parameterized.getActualTypeArguments();
        Object[] clusters = {pair.source, pair.destination};
        for (int i = 0; i < arguments.length; i++) {
            if (arguments[i] instanceof Class<?> expected && clusters[i] != null && !expected.isInstance(clusters[i])) {
                throw new IllegalStateException(target + " expects a " + expected.getSimpleName() + " but the topologies start a "
                    + clusters[i].getClass().getSimpleName());
            }
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == ClusterPair.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        ClusterPair<?, ?> pair = extensionContext.getStore(NAMESPACE).get(ClusterPair.class, ClusterPair.class);
        if (pair == null) {
            throw new IllegalStateException("No cluster pair: " + parameterContext.getParameter() + " is resolved before the class started it");
        }
        checkTypeArguments(parameterContext.getParameter().getParameterizedType(), pair, parameterContext.getParameter().toString());
        return pair;
    }
}
