"""The model layer: the IR (:mod:`.ir`), validation (:mod:`.validate`), the v2 front
(:mod:`.v2`), Cost expressions (:mod:`.cost`) and the current model (:mod:`.session`)."""
