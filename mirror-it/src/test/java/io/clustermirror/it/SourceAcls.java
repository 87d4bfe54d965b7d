package io.clustermirror.it;

import io.clustermirror.testsupport.TestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

/** ACLs on a source cluster that authorizes its clients, for the mirror principals of a test. */
final class SourceAcls {
    private SourceAcls() {
    }

    /** Allows the operations on the cluster and waits until its broker's authorizer has them. */
    static void grant(TestCluster cluster, String principal, ResourceType type, String name, PatternType pattern,
                      AclOperation... operations) throws Exception {
        List<AclBinding> acls = new ArrayList<>();
        for (AclOperation operation : operations) {
            acls.add(new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW)));
        }
        try (Admin admin = cluster.admin()) {
            admin.createAcls(acls).all().get();
            TestUtils.waitFor(() -> new HashSet<>(admin.describeAcls(AclBindingFilter.ANY).values().get()).containsAll(acls),
                MirrorAssertions.TIMEOUT, "the ACLs of " + principal + " on the source broker");
        }
    }
}
