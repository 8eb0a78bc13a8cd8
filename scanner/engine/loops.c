/* Compiled forms of loops of the aligner (scanner/engine/align.py, sentences.py) and of the semantic pass
 * (semantic.py): those numpy cannot express (each step depends on the one before: extend, cluster), and those
 * it expresses only in tens of calls on a pair's few hundred items (the word search, the sentence join and its
 * bounds, open sentences, cores, a block of cosines sifted into seeds, a sentence's vector sums), or by reading
 * four times the bytes (the search by meaning's bounds from int8 codes); and the sentence model's subword
 * encoding (subwords.py), a call and a list of objects a word through the tokenizers library. The Python forms
 * beside their callers are the reference (for the subword ids, the tokenizers library): these give the same
 * results, in the same order and to the bit (the bounds' logarithms and a NaN's payload excepted), and the
 * callers fall back to them when this module was not built. Plain C over the buffer protocol (and x86 vector
 * instructions where the processor has them, checked at each call): no numpy headers, nothing kept between
 * calls; built with -ffp-contract=off (pyproject.toml). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define SEED_COLUMNS 6    /* extend's rows: q0, q1, d0, d1, verbatim, reworded */
#define RECT_COLUMNS 10   /* cluster's rows: align._RECT_COLUMNS */

/* the buffers a kernel took from its arguments, given back: named ones (RELEASE(&a, &b)), or an array's */
static void release_buffers(Py_buffer *const *buffers, size_t count) {
    for (size_t i = 0; i < count; i++) PyBuffer_Release(buffers[i]);
}
#define RELEASE(...) \
    release_buffers((Py_buffer *[]){__VA_ARGS__}, sizeof((Py_buffer *[]){__VA_ARGS__}) / sizeof(Py_buffer *))

static void release_array(Py_buffer *buffers, size_t count) {
    for (size_t i = 0; i < count; i++) PyBuffer_Release(&buffers[i]);  /* an unfilled one (obj NULL) is a no-op */
}

/* first place in sorted a[0:n] whose value is >= x (bisect_left), or > x (bisect_right) */
static Py_ssize_t bisect_left(const int64_t *a, Py_ssize_t n, int64_t x) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static Py_ssize_t bisect_right(const int64_t *a, Py_ssize_t n, int64_t x) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (x < a[mid]) hi = mid; else lo = mid + 1;
    }
    return lo;
}

static int check_rows(Py_buffer *in, Py_buffer *out, Py_ssize_t columns, Py_ssize_t *rows) {
    if (in->len % (Py_ssize_t)(columns * sizeof(int64_t)) != 0 || out->len < in->len) {
        PyErr_SetString(PyExc_ValueError, "rows of int64 expected, and room for as many in the output");
        return -1;
    }
    *rows = in->len / (Py_ssize_t)(columns * sizeof(int64_t));
    return 0;
}

/* align.extend over seeds already in (q0, d0) order: the fragments in sight kept sorted by where they end
 * in the query (ends, owners), and the newest fragment out of sight as the horizon */
static Py_ssize_t extend_rows(const int64_t *seeds, Py_ssize_t n, int64_t max_gap, int64_t overlap, int64_t *out,
                              int64_t *ends, Py_ssize_t *owners) {
    Py_ssize_t fragments = 0, sight = 0, horizon = -1;
    const int64_t far = 8 * max_gap;
    for (Py_ssize_t s = 0; s < n; s++) {
        const int64_t *seed = seeds + s * SEED_COLUMNS;
        int64_t q0 = seed[0], q1 = seed[1], d0 = seed[2], d1 = seed[3];
        if (sight > 0 && ends[0] < q0 - far) {  /* out of sight for good: seeds come in query order */
            Py_ssize_t cut = bisect_left(ends, sight, q0 - far);
            for (Py_ssize_t k = 0; k < cut; k++)
                if (owners[k] > horizon) horizon = owners[k];
            memmove(ends, ends + cut, (size_t)(sight - cut) * sizeof(int64_t));
            memmove(owners, owners + cut, (size_t)(sight - cut) * sizeof(Py_ssize_t));
            sight -= cut;
        }
        Py_ssize_t best = -1;
        int64_t best_cost = 0;
        Py_ssize_t last = bisect_right(ends, sight, q0 + overlap);
        for (Py_ssize_t k = bisect_left(ends, sight, q0 - max_gap); k < last; k++) {
            Py_ssize_t index = owners[k];
            if (index <= horizon) continue;
            const int64_t *f = out + index * SEED_COLUMNS;
            int64_t d_gap = d0 - f[3];
            if (d_gap > max_gap || d_gap < -max_gap || d1 <= f[3]) continue;
            int64_t q_gap = q0 - f[1];
            int64_t cost = (q_gap > 0 ? q_gap : 0) + (d_gap > 0 ? d_gap : 0)
                           + (q_gap > d_gap ? q_gap - d_gap : d_gap - q_gap);
            if (best < 0 || cost < best_cost || (cost == best_cost && index > best)) {
                best = index;
                best_cost = cost;
            }
        }
        if (best < 0) {  /* a new fragment */
            Py_ssize_t at = bisect_right(ends, sight, q1);
            memmove(ends + at + 1, ends + at, (size_t)(sight - at) * sizeof(int64_t));
            memmove(owners + at + 1, owners + at, (size_t)(sight - at) * sizeof(Py_ssize_t));
            ends[at] = q1;
            owners[at] = fragments;
            sight++;
            memcpy(out + fragments * SEED_COLUMNS, seed, SEED_COLUMNS * sizeof(int64_t));
            fragments++;
            continue;
        }
        int64_t *f = out + best * SEED_COLUMNS;
        if (q1 > f[1]) {  /* it ends further on: moved in the sorted ends */
            Py_ssize_t at = bisect_left(ends, sight, f[1]);
            while (owners[at] != best) at++;
            memmove(ends + at, ends + at + 1, (size_t)(sight - at - 1) * sizeof(int64_t));
            memmove(owners + at, owners + at + 1, (size_t)(sight - at - 1) * sizeof(Py_ssize_t));
            sight--;
            at = bisect_right(ends, sight, q1);
            memmove(ends + at + 1, ends + at, (size_t)(sight - at) * sizeof(int64_t));
            memmove(owners + at + 1, owners + at, (size_t)(sight - at) * sizeof(Py_ssize_t));
            ends[at] = q1;
            owners[at] = best;
            sight++;
            f[1] = q1;
        }
        if (q0 < f[0]) f[0] = q0;
        if (d0 < f[2]) f[2] = d0;
        if (d1 > f[3]) f[3] = d1;
        f[4] += seed[4];
        f[5] += seed[5];
    }
    return fragments;
}

/* a seed's place in (q0, d0) order, ties in the order given: numpy's lexsort */
typedef struct {
    int64_t q0, d0;
    Py_ssize_t row;
} Placed;

static int by_query_then_doc(const void *a, const void *b) {
    const Placed *x = a, *y = b;
    if (x->q0 != y->q0) return x->q0 < y->q0 ? -1 : 1;
    if (x->d0 != y->d0) return x->d0 < y->d0 ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* extend(seeds, max_gap, overlap, out) -> fragments written to out; the seeds in any order (sorted here by
 * q0, then d0, then as given) */
static PyObject *extend(PyObject *self, PyObject *args) {
    Py_buffer in, out;
    long long max_gap, overlap;
    if (!PyArg_ParseTuple(args, "y*LLw*", &in, &max_gap, &overlap, &out)) return NULL;
    Py_ssize_t n;
    PyObject *result = NULL;
    int64_t *ends = NULL, *sorted = NULL;
    Py_ssize_t *owners = NULL;
    Placed *places = NULL;
    if (check_rows(&in, &out, SEED_COLUMNS, &n) == 0) {
        ends = PyMem_Malloc((size_t)(n + 1) * sizeof(int64_t));
        owners = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
        places = PyMem_Malloc((size_t)(n + 1) * sizeof(Placed));
        sorted = PyMem_Malloc((size_t)(n + 1) * SEED_COLUMNS * sizeof(int64_t));
        if (ends == NULL || owners == NULL || places == NULL || sorted == NULL) {
            PyErr_NoMemory();
        } else {
            const int64_t *seeds = in.buf;
            for (Py_ssize_t i = 0; i < n; i++)
                places[i] = (Placed){seeds[i * SEED_COLUMNS], seeds[i * SEED_COLUMNS + 2], i};
            qsort(places, (size_t)n, sizeof(Placed), by_query_then_doc);
            for (Py_ssize_t i = 0; i < n; i++)
                memcpy(sorted + i * SEED_COLUMNS, seeds + places[i].row * SEED_COLUMNS, SEED_COLUMNS * sizeof(int64_t));
            result = PyLong_FromSsize_t(extend_rows(sorted, n, max_gap, overlap, out.buf, ends, owners));
        }
    }
    PyMem_Free(ends);
    PyMem_Free(owners);
    PyMem_Free(places);
    PyMem_Free(sorted);
    RELEASE(&in, &out);
    return result;
}

/* a rectangle's start on the axis being split, and its row */
typedef struct {
    int64_t start;
    Py_ssize_t row;
} Keyed;

#define RADIX_BITS 11

/* keyed[0:n] in order of start, ties in the order they came (Python's stable sort by start): an insertion
 * sort for a few, else a least-significant-digit radix sort of the starts less the least one, RADIX_BITS a
 * pass (qsort's comparisons through a function pointer were most of `cluster`'s time on pairs of long pages:
 * tens of thousands of seeds, split again and again); `spare`: room for n more */
static void sort_by_start(Keyed *keyed, Py_ssize_t n, Keyed *spare) {
    if (n < 48) {
        for (Py_ssize_t i = 1; i < n; i++) {
            const Keyed item = keyed[i];
            Py_ssize_t j = i;
            for (; j > 0 && keyed[j - 1].start > item.start; j--) keyed[j] = keyed[j - 1];
            keyed[j] = item;
        }
        return;
    }
    int64_t least = keyed[0].start, most = keyed[0].start;
    for (Py_ssize_t i = 1; i < n; i++) {
        if (keyed[i].start < least) least = keyed[i].start;
        if (keyed[i].start > most) most = keyed[i].start;
    }
    const uint64_t range = (uint64_t)most - (uint64_t)least;
    Keyed *from = keyed, *to = spare;
    for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += RADIX_BITS) {
        Py_ssize_t place[1 << RADIX_BITS] = {0};
        for (Py_ssize_t i = 0; i < n; i++)
            place[(((uint64_t)from[i].start - (uint64_t)least) >> shift) & ((1 << RADIX_BITS) - 1)]++;
        Py_ssize_t total = 0;
        for (int d = 0; d < (1 << RADIX_BITS); d++) {
            const Py_ssize_t count = place[d];
            place[d] = total;
            total += count;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            to[place[(((uint64_t)from[i].start - (uint64_t)least) >> shift) & ((1 << RADIX_BITS) - 1)]++] = from[i];
        Keyed *swap = from;
        from = to;
        to = swap;
    }
    if (from != keyed) memcpy(keyed, from, (size_t)n * sizeof(Keyed));
}

typedef struct {
    Py_ssize_t lo, hi;  /* its rows: members[lo:hi] */
    int axis;
    int other_settled;
} Group;

/* align.cluster: groups split alternately on the query and the document side until neither splits, a stack
 * of groups taken last first; every group's rows lie together in `members`, in the order the Python lists
 * hold them */
static Py_ssize_t cluster_rows(const int64_t *rows, Py_ssize_t n, const int64_t gaps[2], int64_t *out,
                               Py_ssize_t *members, Keyed *keyed, Group *stack) {
    Py_ssize_t found = 0, depth = 0;
    for (Py_ssize_t i = 0; i < n; i++) members[i] = i;
    stack[depth++] = (Group){0, n, 0, 0};
    while (depth > 0) {
        Group g = stack[--depth];
        Py_ssize_t size = g.hi - g.lo;
        if (size == 1) {  /* one seed splits on neither side */
            memcpy(out + found * RECT_COLUMNS, rows + members[g.lo] * RECT_COLUMNS, RECT_COLUMNS * sizeof(int64_t));
            found++;
            continue;
        }
        const int start_column = 2 * g.axis, end_column = 2 * g.axis + 1;
        const int64_t gap = gaps[g.axis];
        for (Py_ssize_t k = 0; k < size; k++) {
            Py_ssize_t row = members[g.lo + k];
            keyed[k] = (Keyed){rows[row * RECT_COLUMNS + start_column], row};
        }
        sort_by_start(keyed, size, keyed + n);
        /* the places where a new group starts: a start beyond the reach of all before it, plus the gap */
        Py_ssize_t splits = 0;
        int64_t reach = rows[keyed[0].row * RECT_COLUMNS + end_column];
        for (Py_ssize_t k = 1; k < size; k++) {
            if (keyed[k].start > reach + gap) splits++;
            int64_t end = rows[keyed[k].row * RECT_COLUMNS + end_column];
            if (end > reach) reach = end;
        }
        if (splits > 0) {  /* each group pushed in order, its rows in their sorted order */
            for (Py_ssize_t k = 0; k < size; k++) members[g.lo + k] = keyed[k].row;
            Py_ssize_t first = 0;
            reach = rows[keyed[0].row * RECT_COLUMNS + end_column];
            for (Py_ssize_t k = 1; k <= size; k++) {
                if (k == size || keyed[k].start > reach + gap) {
                    stack[depth++] = (Group){g.lo + first, g.lo + k, 1 - g.axis, 0};
                    first = k;
                }
                if (k < size) {
                    int64_t end = rows[keyed[k].row * RECT_COLUMNS + end_column];
                    if (end > reach) reach = end;
                }
            }
        } else if (!g.other_settled) {  /* the same rows, in the order they came, tried on the other side */
            stack[depth++] = (Group){g.lo, g.hi, 1 - g.axis, 1};
        } else {  /* settled on both sides: one fragment */
            int64_t *f = out + found * RECT_COLUMNS;
            memcpy(f, rows + members[g.lo] * RECT_COLUMNS, RECT_COLUMNS * sizeof(int64_t));
            for (Py_ssize_t k = 1; k < size; k++) {
                const int64_t *r = rows + members[g.lo + k] * RECT_COLUMNS;
                if (r[0] < f[0]) f[0] = r[0];
                if (r[1] > f[1]) f[1] = r[1];
                if (r[2] < f[2]) f[2] = r[2];
                if (r[3] > f[3]) f[3] = r[3];
                for (int c = 4; c < RECT_COLUMNS; c++) f[c] += r[c];
            }
            found++;
        }
    }
    return found;
}

/* cluster(rows, gap, doc_gap, out) -> fragments written to out */
static PyObject *cluster(PyObject *self, PyObject *args) {
    Py_buffer in, out;
    long long gap, doc_gap;
    if (!PyArg_ParseTuple(args, "y*LLw*", &in, &gap, &doc_gap, &out)) return NULL;
    Py_ssize_t n;
    PyObject *result = NULL;
    Py_ssize_t *members = NULL;
    Keyed *keyed = NULL;
    Group *stack = NULL;
    if (check_rows(&in, &out, RECT_COLUMNS, &n) == 0) {
        if (n == 0) {
            result = PyLong_FromLong(0);
        } else {
            members = PyMem_Malloc((size_t)n * sizeof(Py_ssize_t));
            keyed = PyMem_Malloc(2 * (size_t)n * sizeof(Keyed));  /* and room for the radix sort's copies */
            stack = PyMem_Malloc((size_t)(n + 1) * sizeof(Group));  /* live groups hold disjoint rows */
            if (members == NULL || keyed == NULL || stack == NULL) {
                PyErr_NoMemory();
            } else {
                const int64_t gaps[2] = {gap, doc_gap};
                result = PyLong_FromSsize_t(cluster_rows(in.buf, n, gaps, out.buf, members, keyed, stack));
            }
        }
    }
    PyMem_Free(members);
    PyMem_Free(keyed);
    PyMem_Free(stack);
    RELEASE(&in, &out);
    return result;
}

/* a set of 64-bit word hashes, open addressing; a slot is taken when its stamp is the present one, so the
 * set is emptied by a new stamp, not by clearing */
typedef struct {
    uint64_t *keys;
    uint32_t *stamps;
    size_t mask;
    uint32_t stamp;
} WordSet;

static size_t slot_of(const WordSet *set, uint64_t word) {
    return (size_t)((word ^ (word >> 29)) * 0x9E3779B97F4A7C15ULL >> 17) & set->mask;
}

static void add_word(WordSet *set, uint64_t word) {
    size_t at = slot_of(set, word);
    while (set->stamps[at] == set->stamp) {
        if (set->keys[at] == word) return;
        at = (at + 1) & set->mask;
    }
    set->stamps[at] = set->stamp;
    set->keys[at] = word;
}

static int has_word(const WordSet *set, uint64_t word) {
    size_t at = slot_of(set, word);
    while (set->stamps[at] == set->stamp) {
        if (set->keys[at] == word) return 1;
        at = (at + 1) & set->mask;
    }
    return 0;
}

/* the first and last content word of one side's span [start, end) that the set holds, -1 where none is */
static void first_and_last(const WordSet *set, const uint64_t *hashes, const uint8_t *content, int64_t start,
                           int64_t end, int64_t *first, int64_t *last) {
    *first = *last = -1;
    for (int64_t i = start; i < end; i++)
        if (content[i] && has_word(set, hashes[i])) { *first = i; break; }
    if (*first < 0) return;
    for (int64_t i = end - 1; i >= *first; i--)
        if (content[i] && has_word(set, hashes[i])) { *last = i; break; }
}

/* words_found(bounds, q_hashes, q_content, d_hashes, d_content, out): align._words_found, fragment by
 * fragment: each side's content words in a set, the other side's span searched from both ends */
static PyObject *words_found(PyObject *self, PyObject *args) {
    Py_buffer bounds, q_hashes, q_content, d_hashes, d_content, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*", &bounds, &q_hashes, &q_content, &d_hashes, &d_content, &out))
        return NULL;
    PyObject *result = NULL;
    WordSet set = {NULL, NULL, 0, 0};
    const Py_ssize_t n = bounds.len / (Py_ssize_t)(4 * sizeof(int64_t));
    const int64_t q_len = q_content.len, d_len = d_content.len;
    const int64_t *b = bounds.buf;
    int64_t widest = 0;
    int ok = bounds.len % (Py_ssize_t)(4 * sizeof(int64_t)) == 0 && out.len >= bounds.len
             && q_hashes.len == q_len * (Py_ssize_t)sizeof(uint64_t)
             && d_hashes.len == d_len * (Py_ssize_t)sizeof(uint64_t);
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        const int64_t *f = b + 4 * i;
        ok = 0 <= f[0] && f[0] <= f[1] && f[1] <= q_len && 0 <= f[2] && f[2] <= f[3] && f[3] <= d_len;
        if (f[1] - f[0] > widest) widest = f[1] - f[0];
        if (f[3] - f[2] > widest) widest = f[3] - f[2];
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "fragments (4 int64 columns) within both texts' tokens expected");
        goto done;
    }
    size_t size = 16;
    while (size < 2 * (size_t)widest) size <<= 1;
    set.keys = PyMem_Malloc(size * sizeof(uint64_t));
    set.stamps = PyMem_Calloc(size, sizeof(uint32_t));
    if (set.keys == NULL || set.stamps == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    set.mask = size - 1;
    const uint64_t *qh = q_hashes.buf, *dh = d_hashes.buf;
    const uint8_t *qc = q_content.buf, *dc = d_content.buf;
    int64_t *o = out.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t *f = b + 4 * i;
        set.stamp++;
        for (int64_t j = f[2]; j < f[3]; j++)
            if (dc[j]) add_word(&set, dh[j]);
        first_and_last(&set, qh, qc, f[0], f[1], o + 4 * i, o + 4 * i + 1);
        set.stamp++;
        for (int64_t j = f[0]; j < f[1]; j++)
            if (qc[j]) add_word(&set, qh[j]);
        first_and_last(&set, dh, dc, f[2], f[3], o + 4 * i + 2, o + 4 * i + 3);
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(set.keys);
    PyMem_Free(set.stamps);
    RELEASE(&bounds, &q_hashes, &q_content, &d_hashes, &d_content, &out);
    return result;
}

static int by_value(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* each sentence's sum of its (sentence, word) pairs' weights, and the root of the sum of their squares,
 * added in pair order as numpy's bincount adds them */
static void sentence_sums(const int64_t *sentence, const double *weight, Py_ssize_t pairs, double *mass,
                          double *norm, Py_ssize_t sentences) {
    for (Py_ssize_t s = 0; s < sentences; s++) mass[s] = norm[s] = 0.0;
    for (Py_ssize_t i = 0; i < pairs; i++) {
        mass[sentence[i]] += weight[i];
        norm[sentence[i]] += weight[i] * weight[i];
    }
    for (Py_ssize_t s = 0; s < sentences; s++) norm[s] = sqrt(norm[s]);
}

static double at_least(double x, double floor) { return x > floor ? x : floor; }

/* Where a join of sentences goes: the pairs at min_dice and min_cosine, by query then doc sentence, into
 * the out arrays (room of them); or, with best set, only the highest min(Dice, cosine) of all pairs met. */
typedef struct {
    double min_dice, min_cosine;
    Py_ssize_t room, found;
    int64_t *q, *d;
    double *dice, *cosine;
    double *best;
} Sink;

/* Scratch of a join over n_d doc sentences: a row of sums and of squares for the query sentence at hand, the
 * doc sentences it met, and the last query sentence to meet each doc sentence. */
typedef struct {
    double *mass, *square;
    int64_t *touched, *mark;
} Scratch;

static int scratch_of(Scratch *scratch, Py_ssize_t n_d) {
    scratch->mass = PyMem_Malloc(((size_t)n_d + 1) * sizeof(double));
    scratch->square = PyMem_Malloc(((size_t)n_d + 1) * sizeof(double));
    scratch->touched = PyMem_Malloc(((size_t)n_d + 1) * sizeof(int64_t));
    scratch->mark = PyMem_Malloc(((size_t)n_d + 1) * sizeof(int64_t));
    if (scratch->mass == NULL || scratch->square == NULL || scratch->touched == NULL || scratch->mark == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t d = 0; d < n_d; d++) scratch->mark[d] = -1;
    return 0;
}

static void scratch_free(Scratch *scratch) {
    PyMem_Free(scratch->mass);
    PyMem_Free(scratch->square);
    PyMem_Free(scratch->touched);
    PyMem_Free(scratch->mark);
}

/* Each query (sentence, word) pair, in order (by sentence), meets the `count` doc sentences of its word
 * (by_word from `first`), those open (open; NULL: all); each (query sentence, doc sentence) met gets the sum
 * of the weights and of their squares, added in the order numpy's bincount adds them, so the same bits, and
 * is scored by the sentences' masses and norms. -1: the sink's room ran out (an error is set). */
static int join_sentences(const int64_t *qs, const double *w, const int64_t *count, const int64_t *first,
                          Py_ssize_t q_pairs, const int64_t *by_word, const uint8_t *open, const double *q_mass,
                          const double *q_norm, const double *d_mass, const double *d_norm, Scratch *scratch,
                          Sink *sink) {
    double *mass = scratch->mass, *square = scratch->square;
    int64_t *touched = scratch->touched, *mark = scratch->mark;
    for (Py_ssize_t i = 0; i < q_pairs;) {
        const int64_t sentence = qs[i];
        Py_ssize_t seen = 0;
        for (; i < q_pairs && qs[i] == sentence; i++) {
            const double x = w[i], xx = x * x;
            for (int64_t j = first[i]; j < first[i] + count[i]; j++) {
                const int64_t d = by_word[j];
                if (open != NULL && !open[d]) continue;
                if (mark[d] != sentence) {  /* its first weight for this sentence: 0.0 + x, as bincount */
                    mark[d] = sentence;
                    touched[seen++] = d;
                    mass[d] = x;
                    square[d] = xx;
                } else {
                    mass[d] += x;
                    square[d] += xx;
                }
            }
        }
        if (sink->best == NULL) qsort(touched, (size_t)seen, sizeof(int64_t), by_value);
        for (Py_ssize_t k = 0; k < seen; k++) {
            const int64_t d = touched[k];
            const double dice = 2.0 * mass[d] / at_least(q_mass[sentence] + d_mass[d], 1e-12);
            const double cosine = square[d] / at_least(q_norm[sentence] * d_norm[d], 1e-12);
            mark[d] = -1;  /* the next query sentence may be this one again (the next partner of a bound) */
            if (sink->best != NULL) {
                const double score = dice < cosine ? dice : cosine;
                if (score > *sink->best) *sink->best = score;
                continue;
            }
            if (!(dice >= sink->min_dice && cosine >= sink->min_cosine)) continue;
            if (sink->found == sink->room) {
                PyErr_SetString(PyExc_ValueError, "too little room for the sentence pairs");
                return -1;
            }
            sink->q[sink->found] = sentence;
            sink->d[sink->found] = d;
            sink->dice[sink->found] = dice;
            sink->cosine[sink->found] = cosine;
            sink->found++;
        }
    }
    return 0;
}

/* sentence_frequencies(q_vocab, q_word_sentences, d_vocab, d_word_sentences, max_word_sentences, q_df, d_df,
 * in_d, at) -> join: sentences.sentence_pairs's first step. Both sorted vocabularies merged: each query word's
 * place in the doc's (at, -1 where absent) and the doc sentences holding it (in_d, 0 where absent), each word's
 * sentences in both texts (q_df, d_df: what numpy takes the idf's logarithms of); returns the most sentence
 * pairs the join can meet (each query pair's doc sentences, words in more than max_word_sentences skipped). */
static PyObject *sentence_frequencies(PyObject *self, PyObject *args) {
    Py_buffer q_vocab, q_ws, d_vocab, d_ws, q_df, d_df, in_d, at;
    long long max_ws;
    if (!PyArg_ParseTuple(args, "y*y*y*y*Lw*w*w*w*", &q_vocab, &q_ws, &d_vocab, &d_ws, &max_ws, &q_df, &d_df, &in_d,
                          &at))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t v_q = q_vocab.len / 8, v_d = d_vocab.len / 8;
    if (q_ws.len != q_vocab.len || d_ws.len != d_vocab.len || q_df.len != q_vocab.len || in_d.len != q_vocab.len
            || at.len != q_vocab.len || d_df.len != d_vocab.len) {
        PyErr_SetString(PyExc_ValueError, "two vocabularies with their sentence counts, and room expected");
        goto done;
    }
    const uint64_t *qv = q_vocab.buf, *dv = d_vocab.buf;
    const int64_t *qw = q_ws.buf, *dw = d_ws.buf;
    int64_t *o_qdf = q_df.buf, *o_ddf = d_df.buf, *o_in = in_d.buf, *o_at = at.buf;
    long long join = 0;
    memcpy(o_ddf, dw, (size_t)v_d * sizeof(int64_t));
    for (Py_ssize_t a = 0, c = 0; a < v_q; a++) {
        while (c < v_d && dv[c] < qv[a]) c++;
        const int found = c < v_d && dv[c] == qv[a];
        o_at[a] = found ? c : -1;
        o_in[a] = found ? dw[c] : 0;
        o_qdf[a] = qw[a] + o_in[a];
        if (found) o_ddf[c] += qw[a];
        if (o_in[a] <= max_ws) join += o_in[a] * qw[a];
    }
    result = PyLong_FromLongLong(join);
done:
    RELEASE(&q_vocab, &q_ws, &d_vocab, &d_ws, &q_df, &d_df, &in_d, &at);
    return result;
}

/* sentence_pairs(q_sentence, q_word_of_pair, q_idf, in_d, at, max_word_sentences, q_open, d_word_first,
 * d_by_word, d_sentence, d_word_of_pair, d_idf, d_open, n_q, n_d, min_dice, min_cosine, out_q, out_d, out_dice,
 * out_cosine) -> seeds: sentences.sentence_pairs past its idf's logarithms (q_idf, d_idf: a word each). Each
 * query (sentence, word) pair, in order (by sentence), meets the doc sentences of its word (from
 * sentence_frequencies: none where it is absent, held by more than max_word_sentences doc sentences, or its
 * sentence is not open), those open (d_open; empty: all); each (query sentence, doc sentence) met gets the
 * sum of the weights and of their squares, added in the order numpy's bincount adds them, so the same bits;
 * the pairs at min_dice and min_cosine come out by query then doc sentence, as np.unique orders them. */
static PyObject *sentence_pairs(PyObject *self, PyObject *args) {
    Py_buffer b[12], out_q, out_d, out_dice, out_cosine;
    long long max_ws;
    Py_ssize_t n_q, n_d;
    double min_dice, min_cosine;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*Ly*y*y*y*y*y*y*nnddw*w*w*w*", &b[0], &b[1], &b[2], &b[3], &b[4], &max_ws,
                          &b[5], &b[6], &b[7], &b[8], &b[9], &b[10], &b[11], &n_q, &n_d, &min_dice, &min_cosine,
                          &out_q, &out_d, &out_dice, &out_cosine))
        return NULL;
    PyObject *result = NULL;
    double *sums = NULL;
    int64_t *ints = NULL;
    Scratch scratch = {NULL, NULL, NULL, NULL};
    const int64_t *qs = b[0].buf, *q_wop = b[1].buf, *in_d = b[3].buf, *at = b[4].buf;
    const double *q_idf = b[2].buf, *d_idf = b[10].buf;
    const uint8_t *q_open = b[5].len ? b[5].buf : NULL, *d_open = b[11].len ? b[11].buf : NULL;
    const int64_t *d_first = b[6].buf, *by_word = b[7].buf, *ds = b[8].buf, *d_wop = b[9].buf;
    const Py_ssize_t q_pairs = b[0].len / 8, v_q = b[2].len / 8, v_d = b[6].len / 8, listed = b[7].len / 8;
    const Py_ssize_t d_pairs = b[8].len / 8, room = out_q.len / 8;
    int ok = n_q >= 0 && n_d >= 0 && b[1].len == b[0].len && b[3].len == b[2].len && b[4].len == b[2].len
             && (b[5].len == 0 || b[5].len == n_q) && b[9].len == b[8].len && b[10].len == v_d * 8
             && (b[11].len == 0 || b[11].len == n_d) && out_d.len == out_q.len && out_dice.len == room * 8
             && out_cosine.len == out_dice.len;
    for (Py_ssize_t i = 0; ok && i < q_pairs; i++)
        ok = 0 <= qs[i] && qs[i] < n_q && (i == 0 || qs[i] >= qs[i - 1]) && 0 <= q_wop[i] && q_wop[i] < v_q;
    for (Py_ssize_t w = 0; ok && w < v_q; w++)
        ok = at[w] < v_d && (at[w] < 0 ? in_d[w] == 0 : (in_d[w] >= 0 && d_first[at[w]] >= 0
                                                         && d_first[at[w]] + in_d[w] <= listed));
    for (Py_ssize_t i = 0; ok && i < d_pairs; i++) ok = 0 <= ds[i] && ds[i] < n_d && 0 <= d_wop[i] && d_wop[i] < v_d;
    for (Py_ssize_t j = 0; ok && j < listed; j++) ok = 0 <= by_word[j] && by_word[j] < n_d;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "two texts' sentences, their words' frequencies and room expected");
        goto done;
    }
    /* the query pairs' and doc pairs' weights, masses and norms; the query pairs' counts and first places */
    sums = PyMem_Malloc(((size_t)q_pairs + d_pairs + 2 * n_q + 2 * n_d + 1) * sizeof(double));
    ints = PyMem_Malloc(((size_t)2 * q_pairs + 1) * sizeof(int64_t));
    if (sums == NULL || ints == NULL || scratch_of(&scratch, n_d) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    double *q_w = sums, *d_w = q_w + q_pairs, *q_mass = d_w + d_pairs, *q_norm = q_mass + n_q;
    double *d_mass = q_norm + n_q, *d_norm = d_mass + n_d;
    int64_t *count = ints, *first = ints + q_pairs;
    for (Py_ssize_t i = 0; i < q_pairs; i++) {
        const int64_t w = q_wop[i];
        q_w[i] = q_idf[w];
        count[i] = in_d[w] <= max_ws && (q_open == NULL || q_open[qs[i]]) ? in_d[w] : 0;
        first[i] = count[i] ? d_first[at[w]] : 0;
    }
    for (Py_ssize_t i = 0; i < d_pairs; i++) d_w[i] = d_idf[d_wop[i]];
    sentence_sums(qs, q_w, q_pairs, q_mass, q_norm, n_q);
    sentence_sums(ds, d_w, d_pairs, d_mass, d_norm, n_d);
    Sink sink = {min_dice, min_cosine, room, 0, out_q.buf, out_d.buf, out_dice.buf, out_cosine.buf, NULL};
    if (join_sentences(qs, q_w, count, first, q_pairs, by_word, d_open, q_mass, q_norm, d_mass, d_norm, &scratch,
                       &sink) == 0)
        result = PyLong_FromSsize_t(sink.found);
done:
    PyMem_Free(sums);
    PyMem_Free(ints);
    scratch_free(&scratch);
    release_array(b, 12);
    RELEASE(&out_q, &out_d, &out_dice, &out_cosine);
    return result;
}

#define CODED_ROWS 1024  /* rows whose code products are taken at once, before their bounds */

/* x86-64 with GCC or clang: kernels written with the processor's vector instructions, taken where it has them
 * (checked when they are called); elsewhere, and on older processors, the plain loops */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define X86_KERNELS 1
#endif

/* each row's int8 codes times the query's int16 codes, summed exactly in int32 (|sum| <= 127 x 32767 x width:
 * width up to 512); compiled twice, the AVX2 form taken where the processor has it */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void code_dots_plain(const int8_t *codes, const int16_t *query, int32_t *out, Py_ssize_t rows,
                            Py_ssize_t width) {
    for (Py_ssize_t i = 0; i < rows; i++) {
        const int8_t *row = codes + i * width;
        int32_t dot = 0;
        for (Py_ssize_t j = 0; j < width; j++) dot += (int16_t)row[j] * query[j];
        out[i] = dot;
    }
}

#ifdef X86_KERNELS
/* one row's products, 16 codes at a time, as 8 int32 partial sums (exact: integers) */
__attribute__((target("avx2")))
static inline __m256i code_row_sums(const int8_t *row, const int16_t *query, Py_ssize_t width) {
    __m256i sums = _mm256_setzero_si256();
    for (Py_ssize_t j = 0; j < width; j += 16) {
        const __m256i codes = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(row + j)));
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(codes, _mm256_loadu_si256((const __m256i *)(query + j))));
    }
    return sums;
}

/* code_dots_plain, 8 rows at a time, their partial sums added across in one tree (the plain loop's compiled
 * form summed each row across alone: 2.3x the time); width a multiple of 16 */
__attribute__((target("avx2")))
static void code_dots_avx2(const int8_t *codes, const int16_t *query, int32_t *out, Py_ssize_t rows,
                           Py_ssize_t width) {
    Py_ssize_t i = 0;
    for (; i + 8 <= rows; i += 8) {
        const int8_t *r = codes + i * width;
        const __m256i pair01 = _mm256_hadd_epi32(code_row_sums(r, query, width), code_row_sums(r + width, query, width));
        const __m256i pair23 = _mm256_hadd_epi32(code_row_sums(r + 2 * width, query, width),
                                                 code_row_sums(r + 3 * width, query, width));
        const __m256i pair45 = _mm256_hadd_epi32(code_row_sums(r + 4 * width, query, width),
                                                 code_row_sums(r + 5 * width, query, width));
        const __m256i pair67 = _mm256_hadd_epi32(code_row_sums(r + 6 * width, query, width),
                                                 code_row_sums(r + 7 * width, query, width));
        /* rows 0-3's sums of each 128-bit half, then rows 4-7's; the halves added */
        const __m256i low = _mm256_hadd_epi32(pair01, pair23), high = _mm256_hadd_epi32(pair45, pair67);
        _mm256_storeu_si256((__m256i *)(out + i), _mm256_add_epi32(_mm256_permute2x128_si256(low, high, 0x20),
                                                                   _mm256_permute2x128_si256(low, high, 0x31)));
    }
    code_dots_plain(codes + i * width, query, out + i, rows - i, width);
}
#endif

static void code_dots(const int8_t *codes, const int16_t *query, int32_t *out, Py_ssize_t rows, Py_ssize_t width) {
#ifdef X86_KERNELS
    if (width % 16 == 0 && __builtin_cpu_supports("avx2")) {
        code_dots_avx2(codes, query, out, rows, width);
        return;
    }
#endif
    code_dots_plain(codes, query, out, rows, width);
}

/* the rows' lower and upper bounds on their scores, from their code products (see meaning_candidates) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void code_bounds(const int32_t *dots, const double *scales, const double *sums, const float *inverse,
                        Py_ssize_t rows, double query_scale, double query_l1, double centre_dot, double *lower,
                        double *upper) {
    for (Py_ssize_t i = 0; i < rows; i++) {
        const double approx = scales[i] * query_scale * (double)dots[i] - centre_dot;
        /* half a code a component, and a little more: the codes were rounded from float32 quotients */
        const double err = scales[i] * (query_scale * 0.5 * sums[i] + 0.5 * (1.0 + 1e-3) * query_l1);
        lower[i] = (approx - err) * (double)inverse[i];
        upper[i] = (approx + err) * (double)inverse[i];
    }
}

/* meaning_candidates(codes, scales, code_sums, inverse, query_codes, query_scale, query_l1, centre_dot, count,
 * slack, out) -> rows: semantic.MeaningSpace.nearest's first stage. Each document row d is held as int8 codes c
 * and a scale s (d = s c + e, |e| <= s / 2 a component), the centred query q as int16 codes k and a scale t;
 * then d.q = s t (c.k) + err, |err| <= s t / 2 sum|c| + s / 2 sum|q|: bounds on every row's score
 * (d.q - centre_dot) * inverse from a quarter of the float32 matrix's bytes. The rows whose upper bound
 * reaches the count-th highest lower bound (less slack) are written to out: the count best rows are among
 * them, so scoring only those exactly finds the same rows. */
static PyObject *meaning_candidates(PyObject *self, PyObject *args) {
    Py_buffer codes, scales, code_sums, inverse, query_codes, out;
    double query_scale, query_l1, centre_dot, slack;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*dddndw*", &codes, &scales, &code_sums, &inverse, &query_codes,
                          &query_scale, &query_l1, &centre_dot, &count, &slack, &out))
        return NULL;
    PyObject *result = NULL;
    double *upper = NULL, *heap = NULL;
    const Py_ssize_t rows = scales.len / (Py_ssize_t)sizeof(double);
    const Py_ssize_t width = query_codes.len / (Py_ssize_t)sizeof(int16_t);
    if (codes.len != rows * width || code_sums.len != scales.len || inverse.len != rows * (Py_ssize_t)sizeof(float)
            || out.len != rows * (Py_ssize_t)sizeof(int64_t) || count < 1 || width > 512) {
        PyErr_SetString(PyExc_ValueError, "int8 codes a row, a scale, a sum and an inverse norm a row expected");
        goto done;
    }
    upper = PyMem_Malloc(((size_t)rows + 1) * sizeof(double));
    heap = PyMem_Malloc(((size_t)count + 1) * sizeof(double));  /* the count highest lower bounds, least first */
    if (upper == NULL || heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const int8_t *c = codes.buf;
    const int16_t *k = query_codes.buf;
    const double *s = scales.buf, *sums = code_sums.buf;
    const float *inv = inverse.buf;
    Py_ssize_t held = 0, found = 0;
    int32_t dots[CODED_ROWS];
    double lower[CODED_ROWS];
    Py_BEGIN_ALLOW_THREADS  /* a check's look-up runs on another thread meanwhile */
    for (Py_ssize_t first = 0; first < rows; first += CODED_ROWS) {
        const Py_ssize_t block = rows - first < CODED_ROWS ? rows - first : CODED_ROWS;
        code_dots(c + first * width, k, dots, block, width);
        code_bounds(dots, s + first, sums + first, inv + first, block, query_scale, query_l1, centre_dot, lower,
                    upper + first);
        for (Py_ssize_t i = 0; i < block; i++) {
            const double low = lower[i];
            if (held < count) {  /* sift up */
                Py_ssize_t at = held++;
                while (at > 0 && heap[(at - 1) / 2] > low) {
                    heap[at] = heap[(at - 1) / 2];
                    at = (at - 1) / 2;
                }
                heap[at] = low;
            } else if (low > heap[0]) {  /* replaces the least, sifted down */
                Py_ssize_t at = 0;
                for (;;) {
                    Py_ssize_t child = 2 * at + 1;
                    if (child >= held) break;
                    if (child + 1 < held && heap[child + 1] < heap[child]) child++;
                    if (heap[child] >= low) break;
                    heap[at] = heap[child];
                    at = child;
                }
                heap[at] = low;
            }
        }
    }
    const double reach = held < count ? -HUGE_VAL : heap[0] - slack;
    int64_t *o = out.buf;
    for (Py_ssize_t i = 0; i < rows; i++)
        if (upper[i] >= reach) o[found++] = i;
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(found);
done:
    PyMem_Free(upper);
    PyMem_Free(heap);
    RELEASE(&codes, &scales, &code_sums, &inverse, &query_codes, &out);
    return result;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void quantize_rows(const float *d, int8_t *c, double *s, double *sums, Py_ssize_t rows, Py_ssize_t width) {
    for (Py_ssize_t i = 0; i < rows; i++) {
        const float *row = d + i * width;
        float top = 0.0f;
        for (Py_ssize_t j = 0; j < width; j++) {  /* not fmaxf: a call into libm an element */
            const float magnitude = fabsf(row[j]);
            top = magnitude > top ? magnitude : top;
        }
        const float factor = top > 0.0f ? 127.0f / top : 0.0f;
        int32_t total = 0;
        for (Py_ssize_t j = 0; j < width; j++) {  /* to the nearest, halves away from 0; |x| <= 127 */
            const float x = row[j] * factor;
            const int32_t code = (int32_t)(x + copysignf(0.5f, x));
            c[i * width + j] = (int8_t)code;
            total += abs(code);
        }
        s[i] = (double)top / 127.0;
        sums[i] = (double)total;
    }
}

/* quantize(documents, codes, scales, code_sums): each float32 row as int8 codes (the row times 127 over its
 * largest magnitude, rounded) with its scale (that magnitude / 127) and the sum of its codes' magnitudes: what
 * meaning_candidates bounds scores with. One pass, where numpy made five of the 25.6 MB of 100,000 rows. */
static PyObject *quantize(PyObject *self, PyObject *args) {
    Py_buffer documents, codes, scales, code_sums;
    if (!PyArg_ParseTuple(args, "y*w*w*w*", &documents, &codes, &scales, &code_sums)) return NULL;
    PyObject *result = NULL;
    const Py_ssize_t rows = scales.len / (Py_ssize_t)sizeof(double);
    const Py_ssize_t width = rows ? codes.len / rows : 0;
    if (code_sums.len != scales.len || codes.len != rows * width || documents.len != codes.len * (Py_ssize_t)sizeof(float)) {
        PyErr_SetString(PyExc_ValueError, "float32 rows, and room for their int8 codes, scales and sums expected");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS  /* on the thread that reads the vectors ahead of a check */
    quantize_rows(documents.buf, codes.buf, scales.buf, code_sums.buf, rows, width);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    RELEASE(&documents, &codes, &scales, &code_sums);
    return result;
}

/* span_means(table, rows, starts, ends, subwords, targets, out): semantic.sentence_vectors_many's means, each
 * span's rows of the float32 table (rows[starts[s]:ends[s]] index it) added in order, the first copied (the
 * order numpy's add.reduce along the rows adds them), then divided by the span's subword count in float64 and
 * rounded to float32 (as numpy divides a float32 sum by a float64 count and stores it in float32; 0 for a span
 * without subwords), into row targets[s] of out: the same bits, without gathering the rows, nor a float64
 * matrix of the quotients. */
static PyObject *span_means(PyObject *self, PyObject *args) {
    Py_buffer table, rows_buffer, starts, ends, subwords, targets, out;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*nw*", &table, &rows_buffer, &starts, &ends, &subwords, &targets, &width,
                          &out))
        return NULL;
    PyObject *result = NULL;
    float *total = NULL;
    const Py_ssize_t spans = starts.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t row_bytes = width * (Py_ssize_t)sizeof(float);
    const Py_ssize_t table_rows = width > 0 ? table.len / row_bytes : 0, out_rows = width > 0 ? out.len / row_bytes : 0;
    const Py_ssize_t tokens = rows_buffer.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *rows = rows_buffer.buf, *lo = starts.buf, *hi = ends.buf, *target = targets.buf;
    const double *count = subwords.buf;
    int ok = width > 0 && ends.len == starts.len && targets.len == starts.len
             && subwords.len == spans * (Py_ssize_t)sizeof(double) && table.len == table_rows * row_bytes
             && out.len == out_rows * row_bytes;
    for (Py_ssize_t k = 0; ok && k < spans; k++)
        ok = 0 <= lo[k] && lo[k] < hi[k] && hi[k] <= tokens && 0 <= target[k] && target[k] < out_rows;
    for (Py_ssize_t t = 0; ok && t < tokens; t++) ok = 0 <= rows[t] && rows[t] < table_rows;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "non-empty spans of tokens whose rows are in the table, a count and a row "
                                          "of out each, expected");
        goto done;
    }
    total = PyMem_Malloc((size_t)row_bytes);
    if (!total) { PyErr_NoMemory(); goto done; }
    const float *vectors = table.buf;
    float *o = out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < spans; k++) {
        memcpy(total, vectors + rows[lo[k]] * width, (size_t)row_bytes);
        for (int64_t t = lo[k] + 1; t < hi[k]; t++) {
            const float *row = vectors + rows[t] * width;
            for (Py_ssize_t j = 0; j < width; j++) total[j] += row[j];
        }
        float *mean = o + target[k] * width;
        const double n = count[k];
        for (Py_ssize_t j = 0; j < width; j++) mean[j] = n > 0 ? (float)((double)total[j] / n) : 0.0f;
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(total);
    RELEASE(&table, &rows_buffer, &starts, &ends, &subwords, &targets, &out);
    return result;
}

/* one row of meaning_seeds' centred cosines, `cols` of them into `sims`: the same float32 operations in the same
 * order for every cell (a division each: compiled twice, the AVX2 form taking 8 cells an instruction where the
 * processor has it; vector division rounds as the scalar one does) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void row_cosines(const float *products, float query_dot, const float *doc_dots, float centre_square,
                        float query_norm, const float *doc_norms, float *sims, Py_ssize_t cols) {
    for (Py_ssize_t j = 0; j < cols; j++) {
        float sim = products[j] - query_dot;
        sim -= doc_dots[j];
        sim += centre_square;
        sim /= query_norm * doc_norms[j];
        sims[j] = sim;
    }
}

/* meaning_seeds(products, query_dots, doc_dots, centre_square, query_norms, doc_norms, weak, lexical, first,
 * out_cells, out_meaning, out_lexical) -> seeds: align._with_meaning's block, fused. Each cell's centred cosine
 * from its plain product, as semantic.similarity_blocks makes it, the same float32 operations in the same
 * order ((p - q.m - d.m + m.m) / (|q - m| |d - m|), m.m and the threshold rounded to float32 as numpy rounds a
 * Python float against a float32 array); the cells at `weak` or more, and those of the sorted `lexical` cells
 * (numbered from `first` on: this block's), written in cell order with their cosine and whether lexical. */
static PyObject *meaning_seeds(PyObject *self, PyObject *args) {
    Py_buffer products, q_dots, d_dots, q_norms, d_norms, lexical, out_cells, out_meaning, out_lexical;
    double centre_square, weak;
    long long first;
    if (!PyArg_ParseTuple(args, "y*y*y*dy*y*dy*Lw*w*w*", &products, &q_dots, &d_dots, &centre_square, &q_norms,
                          &d_norms, &weak, &lexical, &first, &out_cells, &out_meaning, &out_lexical))
        return NULL;
    PyObject *result = NULL;
    float *sims = NULL;
    const Py_ssize_t rows = q_dots.len / (Py_ssize_t)sizeof(float), cols = d_dots.len / (Py_ssize_t)sizeof(float);
    const Py_ssize_t cells = rows * cols, marked = lexical.len / (Py_ssize_t)sizeof(int64_t);
    if (products.len != cells * (Py_ssize_t)sizeof(float) || q_norms.len != q_dots.len || d_norms.len != d_dots.len
            || out_cells.len != cells * (Py_ssize_t)sizeof(int64_t) || out_meaning.len != out_cells.len
            || out_lexical.len != cells) {
        PyErr_SetString(PyExc_ValueError, "a float32 block of products, its rows' and columns' parts, and room expected");
        goto done;
    }
    sims = PyMem_Malloc((size_t)(cols > 0 ? cols : 1) * sizeof(float));
    if (sims == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const float *p = products.buf, *qm = q_dots.buf, *dm = d_dots.buf, *qn = q_norms.buf, *dn = d_norms.buf;
    const int64_t *lex = lexical.buf;
    int64_t *o_cells = out_cells.buf;
    double *o_meaning = out_meaning.buf;
    uint8_t *o_lexical = out_lexical.buf;
    const float mm = (float)centre_square, floor = (float)weak;
    Py_ssize_t found = 0, next = 0;
    while (next < marked && lex[next] < first) next++;  /* the lexical cells of this block, in order */
    for (Py_ssize_t i = 0; i < rows; i++) {
        const Py_ssize_t row_first = first + i * cols;
        row_cosines(p + i * cols, qm[i], dm, mm, qn[i], dn, sims, cols);
        Py_ssize_t j = 0;
        while (j < cols) {  /* the cells up to the row's next lexical one by their cosine, then that one */
            const Py_ssize_t stop = next < marked && lex[next] < row_first + cols ? (Py_ssize_t)(lex[next] - row_first)
                                                                                 : cols;
            for (; j < stop; j++) {
                if (sims[j] >= floor) {
                    o_cells[found] = row_first + j;
                    o_meaning[found] = (double)sims[j];
                    o_lexical[found++] = 0;
                }
            }
            if (stop < cols) {
                o_cells[found] = row_first + stop;
                o_meaning[found] = (double)sims[stop];
                o_lexical[found++] = 1;
                while (next < marked && lex[next] <= row_first + stop) next++;  /* repeats included */
                j = stop + 1;
            }
        }
    }
    result = PyLong_FromSsize_t(found);
done:
    PyMem_Free(sims);
    RELEASE(&products, &q_dots, &d_dots, &q_norms, &d_norms, &lexical, &out_cells, &out_meaning, &out_lexical);
    return result;
}

/* the tree that ends lane_dot, over its 16 lanes */
static inline float lanes_summed(float *lanes) {
    for (int width = 8; width >= 1; width /= 2)
        for (int k = 0; k < width; k++) lanes[k] += lanes[k + width];
    return lanes[0];
}

/* a.b in float32 over 16 lanes, lane k summing the products k, k + 16, k + 32..., the lanes then added in a
 * fixed tree (lanes_summed): the same bits in this plain form and in the AVX2 one (no fused multiply-adds:
 * -ffp-contract=off) */
static float lane_dot(const float *a, const float *b, Py_ssize_t n) {
    float lanes[16] = {0};
    for (Py_ssize_t i = 0; i < n; i++) lanes[i % 16] += a[i] * b[i];
    return lanes_summed(lanes);
}

/* lane_dot of `row` with the four rows at a, a + stride, a + 2 stride, a + 3 stride, into out */
static void lane_dots4(const float *a, Py_ssize_t stride, const float *row, Py_ssize_t n, float *out) {
    for (int r = 0; r < 4; r++) out[r] = lane_dot(a + r * stride, row, n);
}

#ifdef X86_KERNELS
/* lanes_summed of the 16 lanes held as lanes 0-7 and 8-15 */
__attribute__((target("avx2")))
static inline float lanes_summed_avx2(__m256 low, __m256 high) {
    const __m256 eight = _mm256_add_ps(low, high);
    const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
    const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
    return _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)));
}

/* lane_dot, 16 products an instruction pair; n a multiple of 16 */
__attribute__((target("avx2")))
static float lane_dot_avx2(const float *a, const float *b, Py_ssize_t n) {
    __m256 low = _mm256_setzero_ps(), high = _mm256_setzero_ps();
    for (Py_ssize_t i = 0; i < n; i += 16) {
        low = _mm256_add_ps(low, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
        high = _mm256_add_ps(high, _mm256_mul_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8)));
    }
    return lanes_summed_avx2(low, high);
}

/* lane_dots4, the row's values loaded once for the four products; n a multiple of 16 */
__attribute__((target("avx2")))
static void lane_dots4_avx2(const float *a, Py_ssize_t stride, const float *row, Py_ssize_t n, float *out) {
    __m256 low[4], high[4];
    for (int r = 0; r < 4; r++) low[r] = high[r] = _mm256_setzero_ps();
    for (Py_ssize_t i = 0; i < n; i += 16) {
        const __m256 row_low = _mm256_loadu_ps(row + i), row_high = _mm256_loadu_ps(row + i + 8);
        for (int r = 0; r < 4; r++) {
            const float *q = a + r * stride + i;
            low[r] = _mm256_add_ps(low[r], _mm256_mul_ps(_mm256_loadu_ps(q), row_low));
            high[r] = _mm256_add_ps(high[r], _mm256_mul_ps(_mm256_loadu_ps(q + 8), row_high));
        }
    }
    for (int r = 0; r < 4; r++) out[r] = lanes_summed_avx2(low[r], high[r]);
}
#endif

typedef float (*DotFunction)(const float *, const float *, Py_ssize_t);
typedef void (*Dots4Function)(const float *, Py_ssize_t, const float *, Py_ssize_t, float *);

/* best_centred's work for one partner of `rows` sentences: its centre with the query, each query sentence's
 * centred dot and norm, then every sentence pair's centred cosine, the highest kept */
static float partner_best(const float *query, Py_ssize_t n, const double *query_sum, const float *query_squares,
                          const float *doc, Py_ssize_t rows, Py_ssize_t width, float *centre, double *sum,
                          float *query_dots, float *query_norms, DotFunction dot, Dots4Function dots4) {
    for (Py_ssize_t c = 0; c < width; c++) sum[c] = query_sum[c];
    for (Py_ssize_t j = 0; j < rows; j++)
        for (Py_ssize_t c = 0; c < width; c++) sum[c] += (double)doc[j * width + c];
    for (Py_ssize_t c = 0; c < width; c++) centre[c] = (float)(sum[c] / (double)(n + rows));
    const float mm = dot(centre, centre, width);
    for (Py_ssize_t i = 0; i < n; i++) {
        query_dots[i] = dot(query + i * width, centre, width);
        const float square = query_squares[i] - 2.0f * query_dots[i] + mm;
        query_norms[i] = sqrtf(square > 1e-12f ? square : 1e-12f);
    }
    float best = -INFINITY, products[4];
    for (Py_ssize_t j = 0; j < rows; j++) {
        const float *row = doc + j * width;
        const float dm = dot(row, centre, width);
        const float square = dot(row, row, width) - 2.0f * dm + mm;
        const float norm = sqrtf(square > 1e-12f ? square : 1e-12f);
        for (Py_ssize_t i = 0; i < n; i += 4) {
            const int block = n - i < 4 ? (int)(n - i) : 4;
            if (block == 4)
                dots4(query + i * width, width, row, width, products);
            else
                for (int r = 0; r < block; r++) products[r] = dot(query + (i + r) * width, row, width);
            for (int r = 0; r < block; r++) {
                float sim = products[r] - query_dots[i + r];
                sim -= dm;
                sim += mm;
                sim /= query_norms[i + r] * norm;
                if (sim > best) best = sim;
            }
        }
    }
    return best;
}

/* best_centred(query, partners, width, out): semantic.best_centred_cosines, for each partner (a float32 buffer
 * of its sentence vectors, `width` wide) the highest centred cosine of its sentences with the query's, each
 * pair centred on the mean of both texts' vectors (summed in float64), -inf for a partner without sentences.
 * Float32 sums in another order than numpy's matrix products: equal to its results within ~1e-6 (the bounds
 * that use it leave 1e-3), and the same bits from one run, or machine, to the next. */
static PyObject *best_centred(PyObject *self, PyObject *args) {
    Py_buffer query, out;
    PyObject *partners;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*O!nw*", &query, &PyList_Type, &partners, &width, &out))
        return NULL;
    PyObject *result = NULL;
    double *query_sum = NULL, *sum = NULL;
    float *scratch = NULL;
    const Py_ssize_t count = PyList_GET_SIZE(partners);
    const Py_ssize_t n = width > 0 ? query.len / (width * (Py_ssize_t)sizeof(float)) : 0;
    if (width <= 0 || query.len != n * width * (Py_ssize_t)sizeof(float)
            || out.len != count * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "float32 sentence vectors `width` wide, and a float64 a partner expected");
        goto done;
    }
    query_sum = PyMem_Calloc((size_t)width * 2, sizeof(double));
    scratch = PyMem_Malloc(((size_t)width + 3 * (size_t)(n > 0 ? n : 1)) * sizeof(float));
    if (query_sum == NULL || scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    sum = query_sum + width;
    float *centre = scratch, *query_squares = scratch + width, *query_dots = query_squares + n,
          *query_norms = query_dots + n;
    DotFunction dot = lane_dot;
    Dots4Function dots4 = lane_dots4;
#ifdef X86_KERNELS
    if (width % 16 == 0 && __builtin_cpu_supports("avx2")) {
        dot = lane_dot_avx2;
        dots4 = lane_dots4_avx2;
    }
#endif
    const float *q = query.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        query_squares[i] = dot(q + i * width, q + i * width, width);
        for (Py_ssize_t c = 0; c < width; c++) query_sum[c] += (double)q[i * width + c];
    }
    double *best = out.buf;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_buffer doc;
        if (PyObject_GetBuffer(PyList_GET_ITEM(partners, k), &doc, PyBUF_SIMPLE) < 0)
            goto done;
        const Py_ssize_t rows = doc.len / (width * (Py_ssize_t)sizeof(float));
        if (doc.len != rows * width * (Py_ssize_t)sizeof(float)) {
            PyBuffer_Release(&doc);
            PyErr_SetString(PyExc_ValueError, "a partner's float32 sentence vectors `width` wide expected");
            goto done;
        }
        best[k] = (n == 0 || rows == 0) ? -INFINITY
                  : (double)partner_best(q, n, query_sum, query_squares, doc.buf, rows, width, centre, sum,
                                         query_dots, query_norms, dot, dots4);
        PyBuffer_Release(&doc);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_Free(query_sum);
    PyMem_Free(scratch);
    RELEASE(&query, &out);
    return result;
}

/* open_sentences(runs, axis, tokens, starts, ends, covered_share, out): align._sentence_rects's open
 * sentences on one side: those whose share of tokens inside verbatim runs (a run's span on `axis`: columns
 * 2 axis and 2 axis + 1 of its 6, clipped to the text's `tokens`) is below covered_share; the share as numpy
 * divides it (float64), so the same sentences. */
static PyObject *open_sentences(PyObject *self, PyObject *args) {
    Py_buffer runs, starts, ends, out;
    int axis;
    Py_ssize_t tokens;
    double covered_share;
    if (!PyArg_ParseTuple(args, "y*iny*y*dw*", &runs, &axis, &tokens, &starts, &ends, &covered_share, &out))
        return NULL;
    PyObject *result = NULL;
    int64_t *cover = NULL;
    const Py_ssize_t n_runs = runs.len / (Py_ssize_t)(SEED_COLUMNS * sizeof(int64_t));
    const Py_ssize_t sentences = starts.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *r = runs.buf, *lo = starts.buf, *hi = ends.buf;
    int ok = (axis == 0 || axis == 1) && tokens >= 0 && runs.len % (Py_ssize_t)(SEED_COLUMNS * sizeof(int64_t)) == 0
             && ends.len == starts.len && out.len == sentences;
    for (Py_ssize_t k = 0; ok && k < sentences; k++) ok = 0 <= lo[k] && lo[k] <= tokens && 0 <= hi[k] && hi[k] <= tokens;
    for (Py_ssize_t k = 0; ok && k < n_runs; k++) ok = r[k * SEED_COLUMNS + 2 * axis] >= 0 && r[k * SEED_COLUMNS + 2 * axis + 1] >= 0;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "runs (6 int64 columns) and sentences within the text expected");
        goto done;
    }
    cover = PyMem_Calloc((size_t)tokens + 2, sizeof(int64_t));
    if (cover == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* how many runs start minus end at each token, then whether each token is inside one, then prefix sums */
    for (Py_ssize_t k = 0; k < n_runs; k++) {
        const int64_t a = r[k * SEED_COLUMNS + 2 * axis], b = r[k * SEED_COLUMNS + 2 * axis + 1];
        cover[a < tokens ? a : tokens] += 1;
        cover[b < tokens ? b : tokens] -= 1;
    }
    int64_t open = 0, inside = 0;
    for (Py_ssize_t t = 0; t < tokens; t++) {
        open += cover[t];
        cover[t] = inside;  /* covered tokens before t */
        inside += open > 0;
    }
    cover[tokens] = inside;
    uint8_t *o = out.buf;
    for (Py_ssize_t k = 0; k < sentences; k++) {
        const int64_t length = hi[k] - lo[k];
        o[k] = (double)(cover[hi[k]] - cover[lo[k]]) / (double)(length > 1 ? length : 1) < covered_share;
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(cover);
    RELEASE(&runs, &starts, &ends, &out);
    return result;
}

/* fragment_cores(bounds, runs, out): align._cores, each fragment's (q0, q1, d0, d1) row against every run:
 * the span of the runs it holds whole, or (INT64_MAX, -1, INT64_MAX, -1) when it holds none */
static PyObject *fragment_cores(PyObject *self, PyObject *args) {
    Py_buffer bounds, runs, out;
    if (!PyArg_ParseTuple(args, "y*y*w*", &bounds, &runs, &out)) return NULL;
    PyObject *result = NULL;
    const Py_ssize_t n = bounds.len / (Py_ssize_t)(4 * sizeof(int64_t));
    const Py_ssize_t n_runs = runs.len / (Py_ssize_t)(SEED_COLUMNS * sizeof(int64_t));
    if (bounds.len % (Py_ssize_t)(4 * sizeof(int64_t)) != 0 || out.len != bounds.len
            || runs.len % (Py_ssize_t)(SEED_COLUMNS * sizeof(int64_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "fragments (4 int64 columns), runs (6) and room expected");
        goto done;
    }
    const int64_t *b = bounds.buf, *r = runs.buf;
    int64_t *o = out.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t *f = b + 4 * i;
        int64_t core[4] = {INT64_MAX, -1, INT64_MAX, -1};
        for (Py_ssize_t k = 0; k < n_runs; k++) {
            const int64_t *run = r + k * SEED_COLUMNS;
            if (run[0] >= f[0] && run[1] <= f[1] && run[2] >= f[2] && run[3] <= f[3]) {
                if (run[0] < core[0]) core[0] = run[0];
                if (run[1] > core[1]) core[1] = run[1];
                if (run[2] < core[2]) core[2] = run[2];
                if (run[3] > core[3]) core[3] = run[3];
            }
        }
        memcpy(o + 4 * i, core, sizeof(core));
    }
    result = Py_NewRef(Py_None);
done:
    RELEASE(&bounds, &runs, &out);
    return result;
}

/* One text's sentences as the bounds read them (sentences.Sentences' arrays). */
typedef struct {
    const uint64_t *vocab;
    const int64_t *word_sentences, *word_of_pair, *pair_sentence, *by_word, *word_first;
    Py_ssize_t words, pairs, sentences;
} TextSentences;

static int text_ok(const TextSentences *t) {
    for (Py_ssize_t w = 0; w < t->words; w++)
        if (t->word_sentences[w] < 0 || t->word_first[w] < 0 || t->word_first[w] + t->word_sentences[w] > t->pairs
                || (w > 0 && t->vocab[w] <= t->vocab[w - 1]))
            return 0;
    for (Py_ssize_t i = 0; i < t->pairs; i++)
        if (t->word_of_pair[i] < 0 || t->word_of_pair[i] >= t->words || t->pair_sentence[i] < 0
                || t->pair_sentence[i] >= t->sentences || t->by_word[i] < 0 || t->by_word[i] >= t->sentences
                || (i > 0 && t->pair_sentence[i] < t->pair_sentence[i - 1]))
            return 0;
    return 1;
}

/* pair_bounds(q arrays, partners' arrays one after the other, their offsets, max_join, out): the whole of
 * sentences.best_pair_scores, a partner at a time: the two vocabularies merged, each (sentence, word) pair's
 * idf over both texts' sentences (libm's log, which may round the last bit otherwise than numpy's: these are
 * bounds, which their users take with a margin), each sentence's mass and norm, then the join
 * (join_sentences) raising out[j] to the partner's best min(Dice, cosine); +inf where the join would pass
 * max_join pairs. */
static PyObject *pair_bounds(PyObject *self, PyObject *args) {
    Py_buffer b[16];
    Py_ssize_t n_q;
    long long max_join;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*ny*y*y*y*y*y*y*y*y*Lw*", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &n_q,
                          &b[6], &b[7], &b[8], &b[9], &b[10], &b[11], &b[12], &b[13], &b[14], &max_join, &b[15]))
        return NULL;
    PyObject *result = NULL;
    double *weights = NULL;
    int64_t *ints = NULL;
    Scratch scratch = {NULL, NULL, NULL, NULL};
    /* the query: vocab, word_sentences, word_of_pair, pair_sentence, by_word, word_first */
    TextSentences q = {b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[4].buf, b[5].buf,
                       b[0].len / 8, b[2].len / 8, n_q};
    /* the partners: vocab, word_sentences, word_first (vocab offsets); word_of_pair, pair_sentence, by_word
     * (pair offsets); sentences each; vocab offsets; pair offsets */
    const uint64_t *p_vocab = b[6].buf;
    const int64_t *p_ws = b[7].buf, *p_first = b[8].buf, *p_wop = b[9].buf, *p_ps = b[10].buf, *p_by = b[11].buf;
    const int64_t *p_n = b[12].buf, *v_off = b[13].buf, *pr_off = b[14].buf;
    const Py_ssize_t k = b[12].len / 8;
    double *out = b[15].buf;
    int ok = b[1].len == b[0].len && b[3].len == b[2].len && b[4].len == b[2].len && b[5].len == b[0].len
             && b[7].len == b[6].len && b[8].len == b[6].len && b[10].len == b[9].len && b[11].len == b[9].len
             && b[13].len == (k + 1) * 8 && b[14].len == (k + 1) * 8 && b[15].len == k * 8 && n_q >= 0
             && text_ok(&q);
    Py_ssize_t most_words = 0, most_pairs = 0, most_sentences = 0;
    for (Py_ssize_t j = 0; ok && j < k; j++) {
        ok = 0 <= v_off[j] && v_off[j] <= v_off[j + 1] && v_off[j + 1] <= b[6].len / 8 && 0 <= pr_off[j]
             && pr_off[j] <= pr_off[j + 1] && pr_off[j + 1] <= b[9].len / 8 && p_n[j] >= 0;
        if (!ok) break;
        TextSentences p = {p_vocab + v_off[j], p_ws + v_off[j], p_wop + pr_off[j], p_ps + pr_off[j], p_by + pr_off[j],
                           p_first + v_off[j], v_off[j + 1] - v_off[j], pr_off[j + 1] - pr_off[j], p_n[j]};
        ok = text_ok(&p);
        if (p.words > most_words) most_words = p.words;
        if (p.pairs > most_pairs) most_pairs = p.pairs;
        if (p.sentences > most_sentences) most_sentences = p.sentences;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "sentences' arrays of a query and its partners expected");
        goto done;
    }
    /* a partner's: the query pairs' weights, the partner pairs' weights, masses and norms of both sides;
     * the query words' sentences in the partner and where they start, the partner words' in the query */
    weights = PyMem_Malloc(((size_t)q.pairs + most_pairs + 2 * n_q + 2 * most_sentences + 1) * sizeof(double));
    ints = PyMem_Malloc(((size_t)3 * q.pairs + 2 * q.words + most_words + 1) * sizeof(int64_t));
    if (weights == NULL || ints == NULL || scratch_of(&scratch, most_sentences) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    double *q_w = weights, *p_w = q_w + q.pairs, *q_mass = p_w + most_pairs, *q_norm = q_mass + n_q;
    double *d_mass = q_norm + n_q, *d_norm = d_mass + most_sentences;
    int64_t *counts = ints, *starts = counts + q.pairs, *q_in_p = starts + q.pairs, *q_at = q_in_p + q.words;
    int64_t *p_in_q = q_at + q.words;
    for (Py_ssize_t j = 0; j < k; j++) {
        TextSentences p = {p_vocab + v_off[j], p_ws + v_off[j], p_wop + pr_off[j], p_ps + pr_off[j], p_by + pr_off[j],
                           p_first + v_off[j], v_off[j + 1] - v_off[j], pr_off[j + 1] - pr_off[j], p_n[j]};
        out[j] = 0.0;
        if (q.pairs == 0) continue;
        Py_ssize_t a = 0, c = 0;  /* both vocabularies sorted: one merge */
        for (Py_ssize_t w = 0; w < p.words; w++) p_in_q[w] = 0;
        for (; a < q.words; a++) {
            while (c < p.words && p.vocab[c] < q.vocab[a]) c++;
            if (c < p.words && p.vocab[c] == q.vocab[a]) {
                q_in_p[a] = p.word_sentences[c];
                q_at[a] = p.word_first[c];
                p_in_q[c] = q.word_sentences[a];
            } else {
                q_in_p[a] = 0;
                q_at[a] = 0;
            }
        }
        const double total = (double)(n_q + p.sentences + 1);
        int64_t join = 0;
        for (Py_ssize_t i = 0; i < q.pairs; i++) {
            const int64_t w = q.word_of_pair[i];
            q_w[i] = log(total / (double)(q.word_sentences[w] + q_in_p[w]));
            counts[i] = q_in_p[w];
            starts[i] = q_at[w];
            join += counts[i];
        }
        if (join > max_join) {
            out[j] = HUGE_VAL;
            continue;
        }
        for (Py_ssize_t i = 0; i < p.pairs; i++) {
            const int64_t w = p.word_of_pair[i];
            p_w[i] = log(total / (double)(p.word_sentences[w] + p_in_q[w]));
        }
        sentence_sums(q.pair_sentence, q_w, q.pairs, q_mass, q_norm, n_q);
        sentence_sums(p.pair_sentence, p_w, p.pairs, d_mass, d_norm, p.sentences);
        Sink sink = {0.0, 0.0, 0, 0, NULL, NULL, NULL, NULL, out + j};
        join_sentences(q.pair_sentence, q_w, counts, starts, q.pairs, p.by_word, NULL, q_mass, q_norm, d_mass, d_norm,
                       &scratch, &sink);
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(weights);
    PyMem_Free(ints);
    scratch_free(&scratch);
    release_array(b, sizeof(b) / sizeof(b[0]));
    return result;
}

/* a seed of a diagonal: sorted by diagonal (j - i), then i */
typedef struct {
    int64_t diagonal, i;
} Seed;

static int by_diagonal(const void *a, const void *b) {
    const Seed *x = a, *y = b;
    if (x->diagonal != y->diagonal) return x->diagonal < y->diagonal ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* verbatim_runs(q_sorted, q_order, q_repeats, d_sorted, d_order, d_repeats, d_offsets, max_repeats, query_mask,
 * w, counts) -> bytearray of runs: align.verbatim_runs_of for one query and many documents (document k's
 * sorted fingerprints d_sorted[d_offsets[k]:d_offsets[k + 1]], each with its place and repeat count, as
 * align.QueryIndex holds them). Every (i, j) with the query's fingerprint i equal to the document's j (neither
 * repeated more than max_repeats times, i not masked: query_mask[i] set, where i is within it) is a seed; a
 * document's seeds sorted by diagonal, then i, adjacent ones on a diagonal joined into runs (q0, q1, d0, d1,
 * length, 0), w the shingle size; counts[k] = the runs of document k, which follow one another. */
static PyObject *verbatim_runs(PyObject *self, PyObject *args) {
    Py_buffer b[8], counts;
    long long max_repeats, w;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*Ly*Lw*", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &max_repeats,
                          &b[7], &w, &counts))
        return NULL;
    PyObject *result = NULL;
    Seed *seeds = NULL;
    int64_t *runs = NULL;
    const uint64_t *qf = b[0].buf, *df = b[3].buf;
    const int64_t *q_order = b[1].buf, *q_rep = b[2].buf, *d_order = b[4].buf, *d_rep = b[5].buf, *off = b[6].buf;
    const uint8_t *mask = b[7].buf;
    const Py_ssize_t n_q = b[0].len / 8, n_d = b[3].len / 8, k = counts.len / 8, masked = b[7].len;
    int64_t *count = counts.buf;
    int ok = b[1].len == b[0].len && b[2].len == b[0].len && b[4].len == b[3].len && b[5].len == b[3].len
             && b[6].len == (k + 1) * 8 && w >= 0;
    for (Py_ssize_t j = 0; ok && j < k; j++) ok = 0 <= off[j] && off[j] <= off[j + 1] && off[j + 1] <= n_d;
    for (Py_ssize_t i = 0; ok && i < n_q; i++)  /* sorted; a first of equals starts its repeats' block */
        ok = (i == 0 || qf[i] >= qf[i - 1]) && q_order[i] >= 0
             && ((i > 0 && qf[i] == qf[i - 1]) || (q_rep[i] >= 1 && i + q_rep[i] <= n_q));
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "a query's and documents' sorted fingerprints with places and repeats expected");
        goto done;
    }
    /* the most seeds any one document makes: each of its fingerprints with every equal one of the query's,
     * those repeated too often on either side left out as below (counted, two texts repeating one line
     * thousands of times, as changelogs do, asked for billions of seeds: a MemoryError that stopped a scan) */
    Py_ssize_t most = 0, room = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        Py_ssize_t made = 0;
        for (Py_ssize_t e = off[j], at = 0; e < off[j + 1]; e++) {
            if (e > off[j] && df[e] < df[e - 1]) { ok = 0; break; }
            while (at < n_q && qf[at] < df[e]) at++;
            if (at < n_q && qf[at] == df[e] && q_rep[at] <= max_repeats && d_rep[e] <= max_repeats) made += q_rep[at];
        }
        if (made > most) most = made;
        room += made;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "each document's fingerprints sorted expected");
        goto done;
    }
    seeds = PyMem_Malloc(((size_t)most + 1) * sizeof(Seed));
    runs = PyMem_Malloc(((size_t)room + 1) * 6 * sizeof(int64_t));
    if (seeds == NULL || runs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t made_runs = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        Py_ssize_t n = 0;
        for (Py_ssize_t e = off[j], at = 0; e < off[j + 1]; e++) {
            while (at < n_q && qf[at] < df[e]) at++;
            if (at >= n_q || qf[at] != df[e] || q_rep[at] > max_repeats || d_rep[e] > max_repeats) continue;
            for (int64_t t = 0; t < q_rep[at]; t++) {
                const int64_t i = q_order[at + t];
                if (i < masked && mask[i]) continue;
                seeds[n++] = (Seed){d_order[e] - i, i};
            }
        }
        qsort(seeds, (size_t)n, sizeof(Seed), by_diagonal);
        const Py_ssize_t before = made_runs;
        for (Py_ssize_t a = 0; a < n;) {  /* a run: seeds on one diagonal, each one token after the last */
            Py_ssize_t z = a;
            while (z + 1 < n && seeds[z + 1].diagonal == seeds[a].diagonal && seeds[z + 1].i == seeds[z].i + 1) z++;
            int64_t *run = runs + 6 * made_runs++;
            run[0] = seeds[a].i;
            run[1] = seeds[z].i + w;
            run[2] = seeds[a].i + seeds[a].diagonal;
            run[3] = seeds[z].i + seeds[z].diagonal + w;
            run[4] = seeds[z].i - seeds[a].i + w;
            run[5] = 0;
            a = z + 1;
        }
        count[j] = made_runs - before;
    }
    result = PyByteArray_FromStringAndSize((const char *)runs, made_runs * 6 * (Py_ssize_t)sizeof(int64_t));
done:
    PyMem_Free(seeds);
    PyMem_Free(runs);
    release_array(b, 8);
    PyBuffer_Release(&counts);
    return result;
}

/* ---- subword encoding (scanner/engine/subwords.py): a byte-fallback BPE model's merges, as the tokenizers
 * library applies them (models/bpe: a word's characters, each one's bytes where the vocabulary lacks it, then
 * the adjacent pair of lowest merge rank merged, the leftmost of equal ranks, until no pair merges) ---- */

typedef struct {  /* a vocabulary of code-point strings: open addressing, FNV-1a over the code points */
    const uint32_t *points;
    const int64_t *offsets, *ids;
    Py_ssize_t *slots, mask;
} Vocabulary;

#define FNV_OFFSET 1469598103934665603ULL

/* FNV-1a of h's string continued by p[0:n] */
static uint64_t points_hash(uint64_t h, const uint32_t *p, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* the id of a string given as two parts (b may be empty), or -1 */
static int64_t vocabulary_id(const Vocabulary *v, const uint32_t *a, Py_ssize_t na, const uint32_t *b,
                             Py_ssize_t nb) {
    const uint64_t h = points_hash(points_hash(FNV_OFFSET, a, na), b, nb);
    for (Py_ssize_t slot = (Py_ssize_t)(h & (uint64_t)v->mask);; slot = (slot + 1) & v->mask) {
        Py_ssize_t entry = v->slots[slot];
        if (entry < 0) return -1;
        const uint32_t *p = v->points + v->offsets[entry];
        if (v->offsets[entry + 1] - v->offsets[entry] == na + nb && memcmp(p, a, (size_t)na * 4) == 0
                && memcmp(p + na, b, (size_t)nb * 4) == 0)
            return v->ids[entry];
    }
}

/* where a merge's pair key is looked for first in a table of `mask + 1` slots (a power of two) */
static Py_ssize_t pair_slot(uint64_t key, Py_ssize_t mask) {
    return (Py_ssize_t)((key * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

/* subword_pairs(vocab_points, vocab_offsets, vocab_ids, merge_points, merge_offsets, out_keys, out_ids,
 * out_slots): each merge "a b" (code points, one U+0020 between the parts) as its pair's key (id of a << 32 |
 * id of b) and the id of the merged string ab, and out_slots (a power of two of them, over twice the merges)
 * the table that finds a key's merge: -1 where empty, else its index, the last merge of a pair listed twice
 * (as the tokenizers library's table keeps it). A ValueError names the first merge whose parts are not in the
 * vocabulary. */
static PyObject *subword_pairs(PyObject *self, PyObject *args) {
    Py_buffer vp, vo, vi, mp, mo, o_keys, o_ids, o_slots;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*w*w*", &vp, &vo, &vi, &mp, &mo, &o_keys, &o_ids, &o_slots)) return NULL;
    PyObject *result = NULL;
    Vocabulary v = {vp.buf, vo.buf, vi.buf, NULL, 0};
    const Py_ssize_t words = vi.len / (Py_ssize_t)sizeof(int64_t), merges = mo.len / (Py_ssize_t)sizeof(int64_t) - 1;
    const int64_t *m_off = mo.buf;
    int ok = vo.len == (words + 1) * (Py_ssize_t)sizeof(int64_t) && merges >= 0
             && o_keys.len == merges * (Py_ssize_t)sizeof(uint64_t) && o_ids.len == merges * (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t slots = o_slots.len / (Py_ssize_t)sizeof(int32_t);
    ok = ok && merges < INT32_MAX / 2 && slots >= 2 * merges + 1 && (slots & (slots - 1)) == 0;
    for (Py_ssize_t w = 0; ok && w < words; w++)
        ok = 0 <= v.offsets[w] && v.offsets[w] <= v.offsets[w + 1] && v.ids[w] >= 0 && v.ids[w] <= UINT32_MAX;
    ok = ok && (words == 0 || v.offsets[words] * 4 <= vp.len);
    for (Py_ssize_t m = 0; ok && m < merges; m++) ok = 0 <= m_off[m] && m_off[m] <= m_off[m + 1];
    ok = ok && (merges == 0 || m_off[merges] * 4 <= mp.len);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "code points with offsets and ids, and room for a key and an id a merge");
        goto done;
    }
    Py_ssize_t size = 1;
    while (size < 2 * words + 2) size *= 2;
    v.slots = PyMem_Malloc((size_t)size * sizeof(Py_ssize_t));
    if (!v.slots) { PyErr_NoMemory(); goto done; }
    v.mask = size - 1;
    for (Py_ssize_t i = 0; i < size; i++) v.slots[i] = -1;
    for (Py_ssize_t w = 0; w < words; w++) {
        const uint32_t *p = v.points + v.offsets[w];
        Py_ssize_t n = (Py_ssize_t)(v.offsets[w + 1] - v.offsets[w]);
        if (vocabulary_id(&v, p, n, p, 0) >= 0) continue;  /* a repeated string: the first keeps it */
        Py_ssize_t slot = (Py_ssize_t)(points_hash(FNV_OFFSET, p, n) & (uint64_t)v.mask);
        while (v.slots[slot] >= 0) slot = (slot + 1) & v.mask;
        v.slots[slot] = w;
    }
    const uint32_t *points = mp.buf;
    uint64_t *keys = o_keys.buf;
    int64_t *ids = o_ids.buf;
    for (Py_ssize_t m = 0; m < merges; m++) {
        const uint32_t *p = points + m_off[m];
        Py_ssize_t n = (Py_ssize_t)(m_off[m + 1] - m_off[m]), space = -1, spaces = 0;
        for (Py_ssize_t i = 0; i < n; i++)
            if (p[i] == 0x20) { space = i; spaces++; }
        int64_t a = -1, b = -1, ab = -1;
        if (spaces == 1) {
            a = vocabulary_id(&v, p, space, p, 0);
            b = vocabulary_id(&v, p + space + 1, n - space - 1, p, 0);
            ab = vocabulary_id(&v, p, space, p + space + 1, n - space - 1);
        }
        if (a < 0 || b < 0 || ab < 0) {
            PyErr_Format(PyExc_ValueError, "merge %zd is not two parts of the vocabulary joined into a third", m);
            goto done;
        }
        keys[m] = (uint64_t)a << 32 | (uint64_t)b;
        ids[m] = ab;
    }
    int32_t *table = o_slots.buf;
    for (Py_ssize_t i = 0; i < slots; i++) table[i] = -1;
    for (Py_ssize_t m = 0; m < merges; m++) {
        Py_ssize_t slot = pair_slot(keys[m], slots - 1);
        while (table[slot] >= 0 && keys[table[slot]] != keys[m]) slot = (slot + 1) & (slots - 1);
        table[slot] = (int32_t)m;
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(v.slots);
    RELEASE(&vp, &vo, &vi, &mp, &mo, &o_keys, &o_ids, &o_slots);
    return result;
}

typedef struct { int64_t rank; Py_ssize_t pos; int64_t id; } Merge;

static int merge_before(const Merge *x, const Merge *y) {
    return x->rank < y->rank || (x->rank == y->rank && x->pos < y->pos);
}

static void heap_push(Merge *heap, Py_ssize_t *size, Merge item) {
    Py_ssize_t i = (*size)++;
    while (i > 0 && merge_before(&item, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = item;
}

static Merge heap_pop(Merge *heap, Py_ssize_t *size) {
    Merge top = heap[0], last = heap[--(*size)];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= *size) break;
        if (child + 1 < *size && merge_before(&heap[child + 1], &heap[child])) child++;
        if (!merge_before(&heap[child], &last)) break;
        heap[i] = heap[child];
        i = child;
    }
    if (*size > 0) heap[i] = last;
    return top;
}

typedef struct {
    const uint32_t *char_codes;
    const int64_t *char_ids, *byte_ids, *merge_ids;
    const uint64_t *merge_keys;
    const int32_t *merge_slots;
    Py_ssize_t chars, merges, mask;
    int corrupt;  /* a slot that no merge of these tables fills: the tables were not made by subword_pairs */
} Merges;

/* the merge of the pair (a, b), which is its rank: its index in the merges, or -1 */
static Py_ssize_t merge_of(Merges *t, int64_t a, int64_t b) {
    uint64_t key = (uint64_t)a << 32 | (uint64_t)b;
    Py_ssize_t slot = pair_slot(key, t->mask);
    for (Py_ssize_t probe = 0; probe <= t->mask; probe++, slot = (slot + 1) & t->mask) {
        int32_t m = t->merge_slots[slot];
        if (m < -1 || m >= t->merges) break;
        if (m < 0 || t->merge_keys[m] == key) return m;
    }
    t->corrupt = 1;
    return -1;
}

static int64_t char_id(const Merges *t, uint32_t code) {
    Py_ssize_t lo = 0, hi = t->chars;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (t->char_codes[mid] < code) lo = mid + 1; else hi = mid;
    }
    return lo < t->chars && t->char_codes[lo] == code ? t->char_ids[lo] : -1;
}

static Py_ssize_t utf8_bytes(uint32_t code, uint8_t *out) {
    if (code < 0x80) { out[0] = (uint8_t)code; return 1; }
    if (code < 0x800) { out[0] = (uint8_t)(0xC0 | code >> 6); out[1] = (uint8_t)(0x80 | (code & 0x3F)); return 2; }
    if (code < 0x10000) {
        out[0] = (uint8_t)(0xE0 | code >> 12); out[1] = (uint8_t)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | code >> 18); out[1] = (uint8_t)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((code >> 6) & 0x3F)); out[3] = (uint8_t)(0x80 | (code & 0x3F));
    return 4;
}

/* one word's symbols (ids, prev, next) merged in place, as the tokenizers library's Word::merge_all without
 * dropout: a heap of candidate merges by (rank, position), each checked still to hold when it comes up */
static void merge_word(Merges *t, int64_t *ids, Py_ssize_t *prev, Py_ssize_t *next, Py_ssize_t n, Merge *heap) {
    Py_ssize_t size = 0;
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        Py_ssize_t m = merge_of(t, ids[i], ids[i + 1]);
        if (m >= 0) heap_push(heap, &size, (Merge){m, i, t->merge_ids[m]});
    }
    while (size > 0) {
        Merge top = heap_pop(heap, &size);
        Py_ssize_t pos = top.pos, right = next[pos];
        if (ids[pos] < 0 || right < 0) continue;  /* merged into its left neighbour, or the last symbol */
        Py_ssize_t m = merge_of(t, ids[pos], ids[right]);
        if (m < 0 || t->merge_ids[m] != top.id) continue;  /* the pair here has changed since */
        ids[pos] = top.id;
        ids[right] = -1;
        next[pos] = next[right];
        if (next[pos] >= 0) prev[next[pos]] = pos;
        if (prev[pos] >= 0 && (m = merge_of(t, ids[prev[pos]], ids[pos])) >= 0)
            heap_push(heap, &size, (Merge){m, prev[pos], t->merge_ids[m]});
        if (next[pos] >= 0 && (m = merge_of(t, ids[pos], ids[next[pos]])) >= 0)
            heap_push(heap, &size, (Merge){m, pos, t->merge_ids[m]});
    }
}

/* subword_ids(points, offsets, char_codes, char_ids, byte_ids, merge_keys, merge_ids, merge_slots, out_ids,
 * out_lengths) -> total: each word (points[offsets[w]:offsets[w + 1]], no surrogates) as the tokenizer's BPE
 * model encodes it after its normalizer ("▁" before it, each space a "▁"); an empty word has no subword. The
 * merges as subword_pairs made them (a merge's rank is its index). */
static PyObject *subword_ids(PyObject *self, PyObject *args) {
    Py_buffer b[8], out_ids, out_lengths;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*w*w*", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7],
                          &out_ids, &out_lengths))
        return NULL;
    PyObject *result = NULL;
    int64_t *ids = NULL;
    Py_ssize_t *links = NULL;
    Merge *heap = NULL;
    const uint32_t *points = b[0].buf;
    const int64_t *offsets = b[1].buf;
    const Py_ssize_t words = b[1].len / (Py_ssize_t)sizeof(int64_t) - 1;
    const Py_ssize_t slots = b[7].len / (Py_ssize_t)sizeof(int32_t);
    Merges t = {b[2].buf, b[3].buf, b[4].buf, b[6].buf, b[5].buf, b[7].buf, b[2].len / (Py_ssize_t)sizeof(uint32_t),
                b[5].len / (Py_ssize_t)sizeof(uint64_t), slots - 1, 0};
    const Py_ssize_t capacity = out_ids.len / (Py_ssize_t)sizeof(int64_t);
    int ok = words >= 0 && b[3].len == t.chars * (Py_ssize_t)sizeof(int64_t) && b[4].len == 256 * (Py_ssize_t)sizeof(int64_t)
             && b[6].len == t.merges * (Py_ssize_t)sizeof(int64_t) && slots > t.merges && (slots & (slots - 1)) == 0
             && out_lengths.len == words * (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t longest = 0;
    for (Py_ssize_t w = 0; ok && w < words; w++) {
        ok = 0 <= offsets[w] && offsets[w] <= offsets[w + 1] && offsets[w + 1] * 4 <= b[0].len;
        if (ok && offsets[w + 1] - offsets[w] > longest) longest = (Py_ssize_t)(offsets[w + 1] - offsets[w]);
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "words as code points with offsets, the merge tables, and room expected");
        goto done;
    }
    const Py_ssize_t most = 4 * (longest + 1);  /* a word's symbols at most: 4 bytes a character, "▁" first */
    ids = PyMem_Malloc((size_t)most * sizeof(int64_t));
    links = PyMem_Malloc((size_t)most * 2 * sizeof(Py_ssize_t));
    heap = PyMem_Malloc((size_t)most * 3 * sizeof(Merge));
    if (!ids || !links || !heap) { PyErr_NoMemory(); goto done; }
    Py_ssize_t total = 0;
    int room = 1;
    int64_t *o = out_ids.buf, *o_lengths = out_lengths.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t w = 0; w < words && room; w++) {
        Py_ssize_t n = 0, length = 0;
        if (offsets[w + 1] > offsets[w]) {
            for (int64_t i = offsets[w] - 1; i < offsets[w + 1]; i++) {
                uint32_t code = i < offsets[w] || points[i] == 0x20 ? 0x2581 : points[i];
                int64_t id = char_id(&t, code);
                if (id >= 0) { ids[n++] = id; continue; }
                uint8_t bytes[4];
                Py_ssize_t count = utf8_bytes(code, bytes);
                for (Py_ssize_t k = 0; k < count; k++) ids[n++] = t.byte_ids[bytes[k]];
            }
            Py_ssize_t *prev = links, *next = links + n;
            for (Py_ssize_t i = 0; i < n; i++) { prev[i] = i - 1; next[i] = i + 1 < n ? i + 1 : -1; }
            merge_word(&t, ids, prev, next, n, heap);
            for (Py_ssize_t i = 0; i >= 0; i = next[i]) {
                if (total == capacity) { room = 0; break; }
                o[total++] = ids[i];
                length++;
            }
        }
        o_lengths[w] = length;
    }
    Py_END_ALLOW_THREADS
    if (!room || t.corrupt) {
        PyErr_SetString(PyExc_ValueError, t.corrupt ? "merge tables not made by subword_pairs" : "no room left for the subword ids");
        goto done;
    }
    result = PyLong_FromSsize_t(total);
done:
    PyMem_Free(ids);
    PyMem_Free(links);
    PyMem_Free(heap);
    release_array(b, 8);
    RELEASE(&out_ids, &out_lengths);
    return result;
}

#ifdef X86_KERNELS
/* one word's sum as subword_sums makes it, 8 values at a time, each float16 widened by the processor (F16C:
 * numpy's value for every pattern, but a signalling NaN comes out quiet), the same float32 additions in the
 * same order; width a multiple of 8 */
__attribute__((target("avx,f16c")))
static void word_sum_f16c(const uint16_t *vectors, const int64_t *id, int64_t length, Py_ssize_t rows,
                          Py_ssize_t width, float *sum, float *rest) {
    const uint16_t *first = vectors + (id[0] < rows ? id[0] : rows - 1) * width;
    for (Py_ssize_t j = 0; j < width; j += 8) {
        _mm256_storeu_ps(sum + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(first + j))));
        _mm256_storeu_ps(rest + j, _mm256_setzero_ps());
    }
    for (int64_t k = 1; k < length; k++) {
        const uint16_t *row = vectors + (id[k] < rows ? id[k] : rows - 1) * width;
        for (Py_ssize_t j = 0; j < width; j += 8)
            _mm256_storeu_ps(rest + j, _mm256_add_ps(_mm256_loadu_ps(rest + j),
                                                     _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + j)))));
    }
    if (length > 1)
        for (Py_ssize_t j = 0; j < width; j += 8)
            _mm256_storeu_ps(sum + j, _mm256_add_ps(_mm256_loadu_ps(sum + j), _mm256_loadu_ps(rest + j)));
}
#endif

/* subword_sums(table, widened, ids, lengths, out_sums, out_counts): each word's subword rows of the float16
 * table (ids past its last row take the last) summed in float32 as semantic._row_sums adds them (the first row
 * plus the sum of the others in turn), and its subword count; to the bit but a NaN's (which of two NaNs an
 * addition keeps, and whether it is quiet; no weight table holds one). Widened 8 at a time by the processor
 * where it can (F16C), else through `widened`: the float32 value of each of the 65,536 float16 bit patterns,
 * as numpy widens them. */
static PyObject *subword_sums(PyObject *self, PyObject *args) {
    Py_buffer table, widened, ids_buffer, lengths_buffer, out, counts;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*w*", &table, &widened, &ids_buffer, &lengths_buffer, &out, &counts))
        return NULL;
    PyObject *result = NULL;
    float *rest = NULL;
    const Py_ssize_t words = lengths_buffer.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t width = words ? out.len / (Py_ssize_t)sizeof(float) / words : 0;
    const Py_ssize_t rows = width ? table.len / (Py_ssize_t)sizeof(uint16_t) / width : 0;
    const int64_t *ids = ids_buffer.buf, *lengths = lengths_buffer.buf;
    Py_ssize_t total = 0;
    int ok = counts.len == words * (Py_ssize_t)sizeof(float) && out.len == words * width * (Py_ssize_t)sizeof(float)
             && table.len == rows * width * (Py_ssize_t)sizeof(uint16_t) && (words == 0 || rows > 0)
             && widened.len == 65536 * (Py_ssize_t)sizeof(float);
    for (Py_ssize_t w = 0; ok && w < words; w++) {
        ok = lengths[w] >= 0;
        total += (Py_ssize_t)lengths[w];
    }
    ok = ok && total * (Py_ssize_t)sizeof(int64_t) == ids_buffer.len;
    for (Py_ssize_t i = 0; ok && i < total; i++) ok = ids[i] >= 0;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "a float16 table, ids with a count a word, and room for their sums expected");
        goto done;
    }
    rest = PyMem_Malloc((size_t)(width ? width : 1) * sizeof(float));
    if (!rest) { PyErr_NoMemory(); goto done; }
    const uint16_t *vectors = table.buf;
    const float *wide = widened.buf;
    float *o = out.buf, *o_counts = counts.buf;
#ifdef X86_KERNELS
    const int widen_f16c = width % 8 == 0 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#endif
    Py_BEGIN_ALLOW_THREADS
    const int64_t *id = ids;
    for (Py_ssize_t w = 0; w < words; w++) {
        float *sum = o + w * width;
        o_counts[w] = (float)lengths[w];
        if (lengths[w] == 0) {
            for (Py_ssize_t j = 0; j < width; j++) sum[j] = 0.0f;
            continue;
        }
#ifdef X86_KERNELS
        if (widen_f16c) {  /* 4x faster than through the table */
            word_sum_f16c(vectors, id, lengths[w], rows, width, sum, rest);
            id += lengths[w];
            continue;
        }
#endif
        const uint16_t *first = vectors + (id[0] < rows ? id[0] : rows - 1) * width;
        for (Py_ssize_t j = 0; j < width; j++) { sum[j] = wide[first[j]]; rest[j] = 0.0f; }
        for (int64_t k = 1; k < lengths[w]; k++) {
            const uint16_t *row = vectors + (id[k] < rows ? id[k] : rows - 1) * width;
            for (Py_ssize_t j = 0; j < width; j++) rest[j] += wide[row[j]];
        }
        if (lengths[w] > 1)
            for (Py_ssize_t j = 0; j < width; j++) sum[j] += rest[j];
        id += lengths[w];
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(rest);
    RELEASE(&table, &widened, &ids_buffer, &lengths_buffer, &out, &counts);
    return result;
}

/* sentence_ends(texts) -> bytes: sentences._SENTENCE_END's match ends in each text of a list, as int64, each
 * text's shifted past the texts before it and one place more each (the cuts split_sentences_many numbers all
 * texts' tokens with). A match is a run of marks (.!?;:), then of closing quotes or brackets ("')]), then of
 * whitespace (Py_UNICODE_ISSPACE: re's \s for str), ending at the whitespace's end; or a line feed, then
 * whitespace holding another line feed, ending after the last one. Where no match starts, none starts in the
 * rest of what was read either (a later mark of the run meets the same closings and the same character after
 * them; closings and whitespace but line feeds start none), so the scan goes on past it: linear in every text. */
static int is_mark(Py_UCS4 c) { return c == '.' || c == '!' || c == '?' || c == ';' || c == ':'; }
static int is_closing(Py_UCS4 c) { return c == '"' || c == '\'' || c == ')' || c == ']'; }

static PyObject *sentence_ends(PyObject *self, PyObject *args) {
    PyObject *texts;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &texts)) return NULL;
    const Py_ssize_t count = PyList_GET_SIZE(texts);
    Py_ssize_t room = 0, found = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *text = PyList_GET_ITEM(texts, k);
        if (!PyUnicode_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "a list of str expected");
            return NULL;
        }
        room += PyUnicode_GET_LENGTH(text) / 2 + 1;  /* every match holds two characters at least */
    }
    int64_t *ends = PyMem_Malloc((size_t)(room > 0 ? room : 1) * sizeof(int64_t));
    if (ends == NULL) return PyErr_NoMemory();
    int64_t shift = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *text = PyList_GET_ITEM(texts, k);
        const int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
        Py_ssize_t i = 0;
        while (i < n) {
            const Py_UCS4 c = PyUnicode_READ(kind, data, i);
            Py_ssize_t j = i + 1, end = -1;
            if (is_mark(c)) {
                while (j < n && is_mark(PyUnicode_READ(kind, data, j))) j++;
                while (j < n && is_closing(PyUnicode_READ(kind, data, j))) j++;
                if (j < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j))) {
                    while (j < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j))) j++;
                    end = j;
                }
            } else if (c == '\n') {
                for (; j < n; j++) {
                    const Py_UCS4 next = PyUnicode_READ(kind, data, j);
                    if (!Py_UNICODE_ISSPACE(next)) break;
                    if (next == '\n') end = j + 1;
                }
            }
            if (end >= 0) ends[found++] = shift + end;
            i = end >= 0 ? end : j;
        }
        shift += n + 1;
    }
    PyObject *result = PyBytes_FromStringAndSize((const char *)ends, found * (Py_ssize_t)sizeof(int64_t));
    PyMem_Free(ends);
    return result;
}

/* align.resolve_overlaps's greedy pass over the query spans [s[k], e[k]) of fragments in the order they are
 * tried (largest first): each is kept unless it overlaps a kept one by more than half its own length
 * (rounded down); keep[k] = 1 for those kept. The kept spans are held sorted by start (held_start, held_end:
 * room for n), and a span is compared only with those that may reach it (starting after its start less the
 * longest kept span, before its end), where Python compared it with every kept one: the same choices, ~3 M
 * comparisons a pair of two changelogs (7 s) made in a few thousand. */
static void keep_greedily(const int64_t *s, const int64_t *e, Py_ssize_t n, uint8_t *keep, int64_t *held_start,
                          int64_t *held_end) {
    Py_ssize_t held = 0;
    int64_t longest = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t half = (e[i] - s[i]) / 2;
        int clash = 0;
        for (Py_ssize_t j = bisect_left(held_start, held, s[i] - longest); j < held && held_start[j] < e[i]; j++) {
            const int64_t overlap = (e[i] < held_end[j] ? e[i] : held_end[j]) - (s[i] > held_start[j] ? s[i] : held_start[j]);
            if (overlap > half) {
                clash = 1;
                break;
            }
        }
        keep[i] = (uint8_t)!clash;
        if (clash) continue;
        const Py_ssize_t at = bisect_left(held_start, held, s[i]);
        memmove(held_start + at + 1, held_start + at, (size_t)(held - at) * sizeof(int64_t));
        memmove(held_end + at + 1, held_end + at, (size_t)(held - at) * sizeof(int64_t));
        held_start[at] = s[i];
        held_end[at] = e[i];
        held++;
        if (e[i] - s[i] > longest) longest = e[i] - s[i];
    }
}

/* a fragment tried: its place among the rows, and what orders it (largest first, then by where it lies) */
typedef struct {
    int64_t size, q0, d0;
    Py_ssize_t place, row;
} Tried;

static int largest_first(const void *a, const void *b) {  /* ties as they came: a stable sort */
    const Tried *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return x->place < y->place ? -1 : (x->place > y->place);
}

static int query_then_doc(const void *a, const void *b) {  /* ties in the order they were kept */
    const Tried *x = a, *y = b;
    if (x->q0 != y->q0) return x->q0 < y->q0 ? -1 : 1;
    if (x->d0 != y->d0) return x->d0 < y->d0 ? -1 : 1;
    return x->place < y->place ? -1 : (x->place > y->place);
}

/* overlaps_resolved(rows, min_tokens, min_sentences, out) -> kept: align.resolve_overlaps over rows of
 * RECT_COLUMNS int64 columns (q0, q1, d0, d1, verbatim tokens, reworded seeds, anchors, ...): the rows that
 * stand (min_tokens query tokens, and min_tokens verbatim tokens or min_sentences reworded seeds with an
 * anchor), tried largest first (query plus document tokens), kept greedily (keep_greedily), their places
 * written to out in query then document order; what numpy's stable sorts give, in one call where they were
 * ~15 calls of a few microseconds (most of `check`'s pairs have one to three fragments). */
static PyObject *overlaps_resolved(PyObject *self, PyObject *args) {
    Py_buffer in, out;
    long long min_tokens, min_sentences;
    if (!PyArg_ParseTuple(args, "y*LLw*", &in, &min_tokens, &min_sentences, &out)) return NULL;
    PyObject *result = NULL;
    Tried *tried = NULL;
    int64_t *spans = NULL;
    uint8_t *keep = NULL;
    const Py_ssize_t n = in.len / (Py_ssize_t)(RECT_COLUMNS * sizeof(int64_t));
    if (in.len % (Py_ssize_t)(RECT_COLUMNS * sizeof(int64_t)) != 0 || out.len < n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "rows of int64 expected, and room for as many places in the output");
        goto done;
    }
    const int64_t *rows = in.buf;
    int64_t *places = out.buf;
    tried = PyMem_Malloc(((size_t)n + 1) * sizeof(Tried));
    spans = PyMem_Malloc(((size_t)n + 1) * 4 * sizeof(int64_t));  /* starts, ends, and the kept ones' */
    keep = PyMem_Malloc((size_t)n + 1);
    if (tried == NULL || spans == NULL || keep == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t *r = rows + i * RECT_COLUMNS;
        if (r[1] - r[0] >= min_tokens && (r[4] >= min_tokens || (r[5] >= min_sentences && r[6] >= 1)))
            tried[count++] = (Tried){(r[1] - r[0]) + (r[3] - r[2]), r[0], r[2], i, i};
    }
    qsort(tried, (size_t)count, sizeof(Tried), largest_first);
    int64_t *starts = spans, *ends = spans + n;
    for (Py_ssize_t k = 0; k < count; k++) {
        const int64_t *r = rows + tried[k].row * RECT_COLUMNS;
        starts[k] = r[0];
        ends[k] = r[1];
    }
    keep_greedily(starts, ends, count, keep, spans + 2 * n, spans + 3 * n);
    Py_ssize_t kept = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (keep[k]) {
            tried[kept] = tried[k];
            tried[kept].place = kept;  /* its rank among the kept, for ties */
            kept++;
        }
    }
    qsort(tried, (size_t)kept, sizeof(Tried), query_then_doc);
    for (Py_ssize_t k = 0; k < kept; k++) places[k] = tried[k].row;
    result = PyLong_FromSsize_t(kept);
done:
    PyMem_Free(tried);
    PyMem_Free(spans);
    PyMem_Free(keep);
    RELEASE(&in, &out);
    return result;
}

/* whether some strong row whose start on one axis (column `start_column`; `by_start`: the strong rows sorted by
 * it, `longest`: their longest span on it) overlaps w there, and does not overlap it on the other axis: a strong
 * row overlapping w starts after w's start less the longest span and before w's end, so only those are read */
static int shadowed_on(const int64_t *r, const int64_t *w, const Keyed *by_start, Py_ssize_t n_strong,
                       int start_column, int64_t longest) {
    const int other = 2 - start_column;
    Py_ssize_t lo = 0, hi = n_strong;  /* the first strong row starting after w's start less the longest span */
    while (lo < hi) {
        const Py_ssize_t mid = lo + (hi - lo) / 2;
        if (by_start[mid].start <= w[start_column] - longest) lo = mid + 1; else hi = mid;
    }
    for (Py_ssize_t k = lo; k < n_strong && by_start[k].start < w[start_column + 1]; k++) {
        const int64_t *t = r + by_start[k].row * RECT_COLUMNS;
        const int here = (t[start_column + 1] < w[start_column + 1] ? t[start_column + 1] : w[start_column + 1])
                         > (t[start_column] > w[start_column] ? t[start_column] : w[start_column]);
        const int there = (t[other + 1] < w[other + 1] ? t[other + 1] : w[other + 1])
                          > (t[other] > w[other] ? t[other] : w[other]);
        if (here && !there) return 1;
    }
    return 0;
}

/* unshadowed(rects, min_tokens, out) -> kept: align._drop_shadowed over rectangle rows (RECT_COLUMNS int64
 * columns: q0, q1, d0, d1, verbatim tokens, ...): a row of fewer than min_tokens verbatim tokens (weak) is
 * dropped when some strong row overlaps it on one side only; out[i] = 1 for every row kept (every strong one).
 * numpy compared every weak row with every strong one in blocks of temporaries (44,000 x 288 rows in a pair
 * of rustdoc pages: 0.16 s); here the strong rows are sorted by their start on each side, and a weak row is
 * compared only with those that overlap it on that side (`shadowed_on`). */
static PyObject *unshadowed(PyObject *self, PyObject *args) {
    Py_buffer rects, out;
    long long min_tokens;
    if (!PyArg_ParseTuple(args, "y*Lw*", &rects, &min_tokens, &out))
        return NULL;
    PyObject *result = NULL;
    Keyed *keyed = NULL;
    const Py_ssize_t n = rects.len / (Py_ssize_t)(RECT_COLUMNS * sizeof(int64_t));
    if (rects.len % (Py_ssize_t)(RECT_COLUMNS * sizeof(int64_t)) != 0 || out.len != n) {
        PyErr_SetString(PyExc_ValueError, "rectangles (RECT_COLUMNS int64 columns) and a byte each expected");
        goto done;
    }
    keyed = PyMem_Malloc(((size_t)n + 1) * 3 * sizeof(Keyed));  /* by query start, by document start, spare */
    if (keyed == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const int64_t *r = rects.buf;
    uint8_t *keep = out.buf;
    Py_ssize_t kept = 0, n_strong = 0;
    Py_BEGIN_ALLOW_THREADS
    Keyed *by_query = keyed, *by_doc = keyed + n + 1, *spare = keyed + 2 * (n + 1);
    int64_t longest_query = 0, longest_doc = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t *t = r + i * RECT_COLUMNS;
        if (t[4] < min_tokens) continue;
        by_query[n_strong] = (Keyed){t[0], i};
        by_doc[n_strong++] = (Keyed){t[2], i};
        if (t[1] - t[0] > longest_query) longest_query = t[1] - t[0];
        if (t[3] - t[2] > longest_doc) longest_doc = t[3] - t[2];
    }
    sort_by_start(by_query, n_strong, spare);
    sort_by_start(by_doc, n_strong, spare);
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t *w = r + i * RECT_COLUMNS;
        const int shadowed = w[4] < min_tokens && n_strong > 0
                             && (shadowed_on(r, w, by_query, n_strong, 0, longest_query)
                                 || shadowed_on(r, w, by_doc, n_strong, 2, longest_doc));
        keep[i] = (uint8_t)!shadowed;
        kept += !shadowed;
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(kept);
done:
    PyMem_Free(keyed);
    RELEASE(&rects, &out);
    return result;
}

static PyMethodDef methods[] = {
    {"unshadowed", unshadowed, METH_VARARGS,
     "unshadowed(rects, min_tokens, out) -> kept: align._drop_shadowed, out[i] = 1 for each rectangle kept."},
    {"overlaps_resolved", overlaps_resolved, METH_VARARGS,
     "overlaps_resolved(rows, min_tokens, min_sentences, out) -> kept: align.resolve_overlaps, the places of the "
     "rows kept written to out in query then document order."},
    {"extend", extend, METH_VARARGS,
     "extend(seeds, max_gap, overlap, out) -> count: align.extend's fragments of int64 seed rows (6 columns, in "
     "any order), written to out."},
    {"cluster", cluster, METH_VARARGS,
     "cluster(rects, gap, doc_gap, out) -> count: align.cluster's fragments of int64 rectangles (10 columns), "
     "written to out."},
    {"words_found", words_found, METH_VARARGS,
     "words_found(bounds, q_hashes, q_content, d_hashes, d_content, out): align._words_found of int64 fragment "
     "rows (q0, q1, d0, d1), written to out."},
    {"sentence_frequencies", sentence_frequencies, METH_VARARGS,
     "sentence_frequencies(q_vocab, q_word_sentences, d_vocab, d_word_sentences, max_word_sentences, q_df, d_df, "
     "in_d, at) -> join: sentences.sentence_pairs's merge of two vocabularies."},
    {"sentence_pairs", sentence_pairs, METH_VARARGS,
     "sentence_pairs(q_sentence, q_word_of_pair, q_idf, in_d, at, max_word_sentences, q_open, d_word_first, "
     "d_by_word, d_sentence, d_word_of_pair, d_idf, d_open, n_q, n_d, min_dice, min_cosine, out_q, out_d, "
     "out_dice, out_cosine) -> seeds: sentences.sentence_pairs past its idf's logarithms."},
    {"meaning_candidates", meaning_candidates, METH_VARARGS,
     "meaning_candidates(codes, scales, code_sums, inverse, query_codes, query_scale, query_l1, centre_dot, count, "
     "slack, out) -> rows: the document rows that may be among the count nearest by centred cosine."},
    {"quantize", quantize, METH_VARARGS,
     "quantize(documents, codes, scales, code_sums): float32 rows as int8 codes, a scale and a sum of |codes| a row."},
    {"span_means", span_means, METH_VARARGS,
     "span_means(table, rows, starts, ends, subwords, targets, width, out): each span's table rows summed in order, "
     "the first copied, and divided by its subword count, into its target row of out."},
    {"meaning_seeds", meaning_seeds, METH_VARARGS,
     "meaning_seeds(products, query_dots, doc_dots, centre_square, query_norms, doc_norms, weak, lexical, first, "
     "out_cells, out_meaning, out_lexical) -> seeds: align._with_meaning's block of cells, fused."},
    {"open_sentences", open_sentences, METH_VARARGS,
     "open_sentences(runs, axis, tokens, starts, ends, covered_share, out): the sentences of one side that verbatim "
     "runs leave open."},
    {"best_centred", best_centred, METH_VARARGS,
     "best_centred(query, partners, width, out): each partner's highest centred cosine with the query's sentences."},
    {"fragment_cores", fragment_cores, METH_VARARGS,
     "fragment_cores(bounds, runs, out): the span of the runs each fragment holds whole."},
    {"pair_bounds", pair_bounds, METH_VARARGS,
     "pair_bounds(q_vocab, q_word_sentences, q_word_of_pair, q_pair_sentence, q_by_word, q_word_first, n_q, "
     "vocab, word_sentences, word_first, word_of_pair, pair_sentence, by_word, sentences, vocab_offsets, "
     "pair_offsets, max_join, out): sentences.best_pair_scores, whole."},
    {"verbatim_runs", verbatim_runs, METH_VARARGS,
     "verbatim_runs(q_sorted, q_order, q_repeats, d_sorted, d_order, d_repeats, d_offsets, max_repeats, "
     "query_mask, w, counts) -> runs: align.verbatim_runs_of's runs of every document, as bytes of int64 rows."},
    {"subword_pairs", subword_pairs, METH_VARARGS,
     "subword_pairs(vocab_points, vocab_offsets, vocab_ids, merge_points, merge_offsets, out_keys, out_ids): each "
     "merge's pair key and merged id."},
    {"subword_ids", subword_ids, METH_VARARGS,
     "subword_ids(points, offsets, char_codes, char_ids, byte_ids, merge_keys, merge_ids, merge_slots, out_ids, "
     "out_lengths) -> total: words encoded by a byte-fallback BPE model's merges."},
    {"sentence_ends", sentence_ends, METH_VARARGS,
     "sentence_ends(texts) -> ends: the sentence ends (sentences._SENTENCE_END's) of a list of str, as bytes of "
     "int64, each text's shifted past the texts before it and one place more each."},
    {"subword_sums", subword_sums, METH_VARARGS,
     "subword_sums(table, widened, ids, lengths, out_sums, out_counts): each word's float16 subword rows summed in "
     "float32."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "loops", NULL, 0, methods};

PyMODINIT_FUNC PyInit_loops(void) { return PyModule_Create(&module); }
