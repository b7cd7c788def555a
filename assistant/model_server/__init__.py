"""The model server: the recognizer and the NLU model on Triton Inference Server, shared by gateway processes.

    launch.py      `assistant model-server` (the app's environment): finds the models, then starts ...
    triton_app.py  ... the Triton process (its own environment: nvidia-pytriton pins numpy<2)
    spec.py        what the one tells the other: model folders, devices, batching, ports
    repository.py  `assistant export-triton DIR`: the same models as a native Triton model repository

The gateways' side is assistant/asr/remote.py and engines/triton_client.py; docs/scaling.md has the picture.
"""
