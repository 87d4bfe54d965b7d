package io.clustermirror.common.compat;

import org.apache.kafka.common.memory.MemoryPool;

import java.nio.ByteBuffer;

/**
 * The memory a client's network layer takes a response's buffer from: Kafka's unpooled allocation, but a response above
 * the bound fails its connection before anything is allocated. Kafka's {@code NetworkReceive} asks the pool for a
 * buffer of the size the peer announced once it has read the four-byte prefix; what the pool throws closes that
 * connection only (Kafka's selector logs it at WARN with the node and its address).
 */
final class BoundingMemoryPool implements MemoryPool {
    private final ResponseBound bound;

    BoundingMemoryPool(ResponseBound bound) {
        this.bound = bound;
    }

    @Override
    public ByteBuffer tryAllocate(int sizeBytes) {
        if (sizeBytes > bound.maxBytes()) {
            throw bound.tooLarge(sizeBytes);
        }
        return MemoryPool.NONE.tryAllocate(sizeBytes);
    }

    @Override
    public void release(ByteBuffer previouslyAllocated) {
        MemoryPool.NONE.release(previouslyAllocated);
    }

    @Override
    public long size() {
        return MemoryPool.NONE.size();
    }

    @Override
    public long availableMemory() {
        return MemoryPool.NONE.availableMemory();
    }

    @Override
    public boolean isOutOfMemory() {
        return MemoryPool.NONE.isOutOfMemory();
    }
}
