/*
 * conv2d_rgb.c -- 2D convolution of an RGB image (3 bytes per pixel)
 * with an integer filter; border taps are skipped by the offlimits test.
 *
 * Reproduces: Juravle MSc thesis, Section 9 "Sample report" (the code
 * analysed there) and Section 5.2 "Shared memory analysis" (2D image
 * convolution).  Fixed bugs of the printed code: out_row/in_row take the
 * address &pixmap[...] (the text assigns a pixel value to a pointer);
 * red/grn/blu start at 0; the text's `image` and `in_image` are one
 * parameter, in_image; filter_gain is a parameter.  Stores wrap modulo
 * 256 (clamping skipped, as in the thesis).  main gives each input
 * pixmap filter-height padding rows above and below, so forming in_row
 * for a row outside the image stays inside the allocation; those rows
 * are never dereferenced.
 *
 * Known answers (image 64 x 48, filter 5 x 5), function convolve():
 *   Loops:
 *     line 63  for y    trip count height = 48
 *     line 64  for x    trip count width = 64 (x = 0, 3, ..., 3*63)
 *     line 68  for fy   trip count filter height = 5
 *     line 71  for fx   trip count filter width = 5
 *   GPU-friendly: yes, the 2D nest (y, x): each (y, x) writes its own 3
 *     bytes of out_image->pixmap, red/grn/blu are private, x's step 3 is
 *     constant (normalizable), no calls.  fy and fx stay sequential in
 *     the thread (+ reductions of red/grn/blu: friendly alone).
 *   Accessed byte sections, half-open, relative to each base pointer
 *   (LP64 struct layout: width at 0, height at 4, pixmap at 8):
 *     in_image          read   [0, 16)   (width, height, pixmap)
 *     in_image->pixmap  read   [0, 3*w*h) = [0, 9216)
 *     out_image         read   [8, 16)   (pixmap only)
 *     out_image->pixmap write  [0, 3*w*h) = [0, 9216)
 *     filter            read   [0, 16)   (width, height, pixmap)
 *     filter->pixmap    read   [0, 4*fw*fh) = [0, 100)
 *   (The thesis' static section for the input pixmap,
 *    [-3/2*fh*iw - 3/2*fw, ...], is an over-approximation: the range
 *    analysis cannot use the offlimits test.)
 *   Coalescing (warp 32, 128-byte line), in_row[px + c] and out_row[x + c]:
 *     natural mapping  (Grid.x = y, as in the thesis report): warp area
 *       32*3*w bytes, 3*w/4 = 48 requests, clamped to 32.
 *     reversed mapping (Grid.x = x / 3): warp area 32*3 = 96 bytes,
 *       1 request (2 when the 96 bytes straddle a 128-byte line).
 *     filter->pixmap[fx + fy*fw]: 1 request (same address in all threads).
 *   Shared memory: filter->pixmap [0, 4*fw*fh) is read by every thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int width, height;
    unsigned char *pixmap;
} image_t;

typedef struct {
    int width, height;
    int *pixmap;
} filter_t;

void convolve(image_t *in_image, image_t *out_image, filter_t *filter,
              int filter_gain)
{
    int x, y;
    for (y = 0; y < in_image->height; y += 1) {
        for (x = 0; x < in_image->width * 3; x += 3) {
            unsigned char *out_row = &out_image->pixmap[y * in_image->width * 3];
            int fx, fy;
            int red = 0, grn = 0, blu = 0;
            for (fy = 0; fy < filter->height; fy += 1) {
                int py = y + fy - (filter->height / 2);
                unsigned char *in_row = &in_image->pixmap[py * in_image->width * 3];
                for (fx = 0; fx < filter->width; fx += 1) {
                    int px = x + 3 * (fx - filter->width / 2);
                    int coeff = filter->pixmap[fx + fy * filter->width];
                    int offlimits = px < 0 || px >= in_image->width * 3 || py < 0 ||
                                    py >= in_image->height;
                    red += offlimits ? 0 : in_row[px + 0] * coeff;
                    grn += offlimits ? 0 : in_row[px + 1] * coeff;
                    blu += offlimits ? 0 : in_row[px + 2] * coeff;
                }
            }
            /* clamping skipped for brevity: stores wrap modulo 256 */
            out_row[x + 0] = red * filter_gain;
            out_row[x + 1] = grn * filter_gain;
            out_row[x + 2] = blu * filter_gain;
        }
    }
}

int main(void)
{
    enum { W = 64, H = 48, FW = 5, FH = 5 };
    size_t row = 3 * (size_t)W;
    unsigned char *in_buf = calloc((H + 2 * FH) * row, 1);
    image_t in = { W, H, in_buf + FH * row };
    image_t out = { W, H, malloc(H * row) };
    int coeffs[FW * FH];
    filter_t filter = { FW, FH, coeffs };
    if (!in_buf || !out.pixmap)
        return 1;
    for (size_t k = 0; k < H * row; k++)
        in.pixmap[k] = (unsigned char)((k * 37 + k / row * 11) % 251);
    for (int k = 0; k < FW * FH; k++)
        coeffs[k] = 1 + (k % 3);
    convolve(&in, &out, &filter, 1);
    uint64_t h = 1469598103934665603u;
    for (size_t k = 0; k < H * row; k++)
        h = (h ^ out.pixmap[k]) * 1099511628211u;
    printf("checksum: %llu\n", (unsigned long long)h);
    free(in_buf);
    free(out.pixmap);
    return 0;
}
