"""The tiler: geometry (:mod:`.geometry`), one tiling (:mod:`.tiling`), the space of tilings (:mod:`.search`)."""
