package io.clustermirror.chaos.productbug;

import io.clustermirror.broker.node.InjectedProductBug;

/** The broker's view of the bug {@link ProductBugAgent} was started with (found by the broker's {@code ServiceLoader}). */
public final class AgentProductBug implements InjectedProductBug {
    @Override
    public String id() {
        return String.valueOf(ProductBugAgent.injected());
    }

    @Override
    public boolean skipsProducerStateReset() {
        return ProductBugAgent.SKIP_PRODUCER_STATE_RESET.equals(ProductBugAgent.injected());
    }
}
