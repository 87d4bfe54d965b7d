package io.clustermirror.it;

import io.clustermirror.testkit.MirrorTestCluster;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;
import org.junit.platform.commons.support.ReflectionSupport;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;

/**
 * The extension behind {@link MirrorClusterTest}: starts the class's {@link ClusterPair} before its {@code @BeforeAll}
 * methods, keeps it in the class's extension store, which closes it (an {@link AutoCloseable}) once the class is done,
 * and hands it to the class's static {@code ClusterPair} fields and {@code ClusterPair} parameters.
 */
final class MirrorClusterExtension implements BeforeAllCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(MirrorClusterExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Class<?> testClass = context.getRequiredTestClass();
        MirrorClusterTest spec = AnnotationSupport.findAnnotation(testClass, MirrorClusterTest.class)
            .orElseThrow(() -> new IllegalStateException(testClass + " is not annotated @MirrorClusterTest"));
        ClusterPair<?, ?> pair = ClusterPair.start(topologies(testClass, spec));
        context.getStore(NAMESPACE).put(ClusterPair.class, pair);
        for (Field field : ReflectionSupport.findFields(testClass, MirrorClusterExtension::isPairField, HierarchyTraversalMode.TOP_DOWN)) {
            checkTypeArguments(field.getGenericType(), pair, field.toString());
            field.setAccessible(true);
            field.set(null, pair);
        }
    }

    private static boolean isPairField(Field field) {
        return Modifier.isStatic(field.getModifiers()) && field.getType() == ClusterPair.class;
    }

    /** The topologies the annotation describes, or those its static method returns. */
    private static ClusterPair.Topologies topologies(Class<?> testClass, MirrorClusterTest spec) throws Exception {
        if (spec.topologies().isEmpty()) {
            return ClusterPair.Topologies.of(
                MirrorTestCluster.builder().name(spec.source()).brokers(spec.sourceBrokers()).topology(),
                MirrorTestCluster.builder().name(spec.destination()).brokers(spec.destinationBrokers()).withExtension(true).topology());
        }
        Method factory = ReflectionSupport.findMethod(testClass, spec.topologies())
            .filter(m -> Modifier.isStatic(m.getModifiers()) && m.getReturnType() == ClusterPair.Topologies.class)
            .orElseThrow(() -> new IllegalStateException(testClass + " has no static method " + spec.topologies()
                + "() returning ClusterPair.Topologies"));
        return (ClusterPair.Topologies) ReflectionSupport.invokeMethod(factory, null);
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
