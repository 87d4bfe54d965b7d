package io.clustermirror.common.records;

import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * An ACL that a mirror's metadata sync created on the destination, in {@code __mirror_state} (key
 * {@link #key()}: {@code acl:<mirror>:<binding>}). Only ACLs recorded here are ever removed by the mirror,
 * so ACLs created on the destination by anyone else are never touched, and a restart forgets nothing.
 * Written before the ACL is created and tombstoned after it is deleted; removed with the mirror.
 *
 * @param mirror       the mirror that created the ACL
 * @param resourceType {@link ResourceType} name
 * @param resourceName resource name (a prefix for PREFIXED patterns)
 * @param patternType  {@link PatternType} name (LITERAL or PREFIXED)
 * @param principal    e.g. {@code User:alice}
 * @param host         host, {@code *} for any
 * @param operation    {@link AclOperation} name
 * @param permission   {@link AclPermissionType} name
 * @param createdMs    when the mirror decided to create it
 */
public record MirrorAclRecord(String mirror, String resourceType, String resourceName, String patternType,
                              String principal, String host, String operation, String permission, long createdMs) {
    public static final String KEY_PREFIX = "acl:";

    public static MirrorAclRecord of(String mirror, AclBinding binding, long createdMs) {
        ResourcePattern r = binding.pattern();
        AccessControlEntry e = binding.entry();
        return new MirrorAclRecord(mirror, r.resourceType().name(), r.name(), r.patternType().name(), e.principal(),
            e.host(), e.operation().name(), e.permissionType().name(), createdMs);
    }

    public AclBinding binding() {
        return new AclBinding(new ResourcePattern(ResourceType.valueOf(resourceType), resourceName, PatternType.valueOf(patternType)),
            new AccessControlEntry(principal, host, AclOperation.valueOf(operation), AclPermissionType.valueOf(permission)));
    }

    public String key() {
        return key(mirror, binding());
    }

    /**
     * The record key of an ACL of a mirror: every part URL-encoded and joined by {@code /}, so that distinct
     * bindings never share a key (mirror names cannot contain {@code :}).
     */
    public static String key(String mirror, AclBinding binding) {
        ResourcePattern r = binding.pattern();
        AccessControlEntry e = binding.entry();
        return KEY_PREFIX + mirror + ":" + String.join("/", r.resourceType().name(), r.patternType().name(), enc(r.name()),
            enc(e.principal()), enc(e.host()), e.operation().name(), e.permissionType().name());
    }

    /** The mirror named by an ACL record key. */
    public static String mirrorOfKey(String key) {
        int end = key.indexOf(':', KEY_PREFIX.length());
        return key.substring(KEY_PREFIX.length(), end < 0 ? key.length() : end);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
