"""Inference backends for the joint intent + slot model, behind one protocol (engines.base).

Nothing here knows about meetings: a backend takes token ids and a mask and returns logits.
"""
