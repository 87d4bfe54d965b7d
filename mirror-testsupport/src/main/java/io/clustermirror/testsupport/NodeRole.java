package io.clustermirror.testsupport;

/** The roles of a KRaft node, as its {@code process.roles} names them. */
public enum NodeRole {
    COMBINED("broker,controller"), CONTROLLER("controller"), BROKER("broker");

    private final String processRoles;

    NodeRole(String processRoles) {
        this.processRoles = processRoles;
    }

    /** The value of {@code process.roles}. */
    public String processRoles() {
        return processRoles;
    }

    /** Whether the node serves clients and holds replicas. */
    public boolean broker() {
        return this != CONTROLLER;
    }

    /** Whether the node is a voter of the KRaft quorum. */
    public boolean controller() {
        return this != BROKER;
    }
}
