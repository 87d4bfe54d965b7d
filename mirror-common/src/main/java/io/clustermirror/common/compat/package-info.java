/**
 * The clients' half of the compatibility layer: the only code outside the broker's bridge
 * ({@code io.clustermirror.broker.bridge}) that touches the internals of Kafka's clients (its network client and
 * fetch sessions, the requests and responses they carry, its record classes), so that one jar runs with the
 * kafka-clients of every supported Kafka line. The build enforces it (build-config/kafka-import-control.xml). It also
 * holds what the mirror reads of the format of Kafka's own internal topics ({@link io.clustermirror.common.compat.SourceTransaction}).
 *
 * <p>Where the supported lines differ in a shape (a class moved package, a constructor grew a parameter), this code
 * binds the running line's shape once, by reflection ({@link io.clustermirror.common.compat.KafkaClientShapes}); what
 * it refers to directly is the same in every supported line, which every node checks at start.
 */
package io.clustermirror.common.compat;
