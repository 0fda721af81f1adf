"""The schedule IR (:mod:`.ir`, :mod:`.expr`), built from a tiling (:mod:`.build`), walked
(:mod:`.walk`) by the cost model (:mod:`.cost`) and the verifier (:mod:`.verify`)."""
