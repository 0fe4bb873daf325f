"""Example assoc plugin (see docs/write-a-plugin.md)."""
