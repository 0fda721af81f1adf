/*
 * SQ8 fused chains, line-buffer (KEEP) mode (CNN_SQ8_TFLM_Conv.h, docs/cnn-sq8.md): a TFLM
 * convolution on one tile of a chain whose L1 intermediates keep, from one tile to the next, the
 * lines both tiles need instead of computing them twice. The code is ours.
 */
#include <string.h>
#include "CNN_SQ8_BasicKernels.h"

/* The convolution of this tile's new output lines: the first Kept of the tile's Ho are in Out
 * already, so Out moves Kept lines on and the input the Kept * Sy lines their windows start on.
 * Kept > 0 only after the first tile, and the tiler starts no tile but the first in the padding
 * (tiler/geometry.py, valid_tiling): no top padding to skip. */
static void at_fused_new_lines(const KerConvKeep_TFLM_SQ8_T *Arg, int Kept, KerConv_TFLM_SQ8_T *C)
{
	int In = Kept * Arg->Sy;

	C->In = Arg->In + In * Arg->W * Arg->InFeat;
	C->Filter = Arg->Filter;
	C->Bias = Arg->Bias;
	C->Out = Arg->Out + Kept * Arg->Wo * Arg->OutFeat;
	C->Scale = Arg->Scale;
	C->ScaleN = Arg->ScaleN;
	C->Infos = Arg->Infos;
	C->W = Arg->W;
	C->H = (unsigned short int) (Arg->H - In);
	C->InFeat = Arg->InFeat;
	C->Wo = Arg->Wo;
	C->Ho = (unsigned short int) (Arg->Ho - Kept);
	C->OutFeat = Arg->OutFeat;
	C->GroupIn = Arg->GroupIn;
	C->GroupOut = Arg->GroupOut;
	C->Chunk = Arg->Chunk;
	C->ChunkIndex = Arg->ChunkIndex;
	C->NChunks = Arg->NChunks;
	C->Fx = Arg->Fx;
	C->Fy = Arg->Fy;
	C->Sx = Arg->Sx;
	C->Sy = Arg->Sy;
	C->Dx = Arg->Dx;
	C->Dy = Arg->Dy;
	C->PadLeft = Arg->PadLeft;
	C->Pad = Arg->Pad;
}

/* Move the last Keep of Buf's H lines (Row bytes each) to its front, for the next tile. The
 * ranges overlap when H < 2 Keep: the move then goes in rounds of at most the distance between
 * them (H - Keep lines), each round's source untouched by the earlier rounds' destinations; the
 * cores share each round. */
static void at_fused_keep_lines(signed char *Buf, int H, int Row, int Keep)
{
	int K = gap_min(Keep, H), Bytes = K * Row, Dist = (H - K) * Row, Done;

	for (Done = 0; Dist > 0 && Done < Bytes; Done += Dist) {
		int Len = gap_min(Dist, Bytes - Done);
		int Per = ((Len + gap_ncore() - 1) / gap_ncore() + 3) & ~3;
		int First = gap_min(gap_coreid() * Per, Len), Last = gap_min(First + Per, Len);

		memcpy(Buf + Done + First, Buf + Done + Dist + First, (size_t) (Last - First));
		gap_waitbarrier(0);
	}
}

static void at_fused_conv(KerConvKeep_TFLM_SQ8_T *Arg, void (*Conv)(KerConv_TFLM_SQ8_T *))
{
	KerConv_TFLM_SQ8_T C;
	int Kept = Arg->TileIndex ? gap_min(Arg->KeepOut, Arg->Ho) : 0;

	at_fused_new_lines(Arg, Kept, &C);
	if (C.Ho > 0)
		Conv(&C);	/* every core calls it, as the fork would: it shares the work and waits */
	if (Arg->KeepIn && !Arg->TileLast)
		at_fused_keep_lines(Arg->In, Arg->H, Arg->W * Arg->InFeat, Arg->KeepIn);
}

void KerParConvKeep_TFLM_SQ8(KerConvKeep_TFLM_SQ8_T *Arg)
{
	at_fused_conv(Arg, KerParConv_TFLM_SQ8);
}

void KerParConvDWKeep_TFLM_SQ8(KerConvKeep_TFLM_SQ8_T *Arg)
{
	at_fused_conv(Arg, KerParConvDW_TFLM_SQ8);
}
