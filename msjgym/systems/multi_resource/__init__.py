"""The multi-resource family: a pool (or identical nodes) with a capacity vector over named resources, jobs that hold
a demand vector at once; the multiserver-job family's model, event loop and accounting, reused (docs/families/
multi_resource.md)."""
