/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rules in one place: precedence, fail-safe undecided outcomes, and
 * the difference between a block and a whole device before conversion.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "fake-tree.h"
#include "rules.h"
#include "util.h"

#define BS (128ULL << 20)

static struct policy *load(const char *text) {
        char *root = fake_tree_new();
        _cleanup_free_ char *path = NULL;
        struct policy_error e = {};
        struct policy *p = NULL;

        fake_write(root, "p.conf", "%s", text);
        assert_true(asprintf(&path, "%s/p.conf", root) > 0);
        if (policy_load(path, &p, &e) < 0)
                fail_msg("%s:%u: %s", e.file, e.line, e.reason);
        fake_tree_free(root);
        return p;
}

static struct memory_identity block(uint64_t id, int node) {
        return (struct memory_identity) { .start = id * BS, .end = (id + 1) * BS, .block_id = id, .node = node,
                                          .region = -1 };
}

static struct rule_decision decide(const struct policy *p, struct memory_identity id) {
        struct rule_decision d;

        assert_int_equal(rules_decide(p, &id, &d), 0);
        return d;
}

static void test_precedence(void **state) {
        _cleanup_policy_ struct policy *p = load(
                "[zones]\ndefault = online_movable\n"
                "[node 1]\nzone = online_kernel\n"
                "[range 0x1000000000-0x10ffffffff]\nzone = online\n"
                "[device fast]\nmatch_device = dax0.0\nzone = online_kernel\n"
                "[pmem]\nzone = online_movable\n"
                "[exclude]\nblock = 7\n");
        struct memory_identity id;
        struct rule_decision d;
        char buf[64];

        d = decide(p, block(7, 1));
        assert_int_equal(d.origin, RULE_EXCLUDE);
        assert_int_equal(d.zone, ZONE_SKIP);
        assert_int_equal(d.line, 13);
        assert_string_equal(rules_reason(&d, buf, sizeof(buf)), "excluded");

        id = block(0x1000000000 / BS, 1);       /* in the range, on node 1: the range wins */
        d = decide(p, id);
        assert_int_equal(d.origin, RULE_RANGE);
        assert_int_equal(d.zone, ZONE_ONLINE);
        assert_string_equal(rules_reason(&d, buf, sizeof(buf)), "range rule line 5");

        id.dax_device = "dax0.0";               /* and dax0.0's: the device rule wins */
        d = decide(p, id);
        assert_int_equal(d.origin, RULE_DEVICE);
        assert_string_equal(rules_reason(&d, buf, sizeof(buf)), "device rule fast");

        d = decide(p, block(40, 1));
        assert_int_equal(d.origin, RULE_NODE);
        assert_int_equal(d.zone, ZONE_KERNEL);

        id = block(40, 0);
        id.dax_device = "dax1.0";
        d = decide(p, id);
        assert_int_equal(d.origin, RULE_PMEM_DEFAULT);
        assert_false(rule_is_explicit(d.origin));

        d = decide(p, block(40, 0));
        assert_int_equal(d.origin, RULE_DEFAULT);
        assert_int_equal(d.zone, ZONE_MOVABLE);
        assert_string_equal(rule_origin_to_string(d.origin), "default");
        assert_string_equal(rule_origin_to_string(RULE_PMEM_DEFAULT), "pmem-default");
        assert_string_equal(rule_origin_to_string(_RULE_ORIGIN_MAX), "unknown");
}

/* Fail safe: a rule that needs a fact the memory lacks leaves it undecided. */
static void test_undecided(void **state) {
        _cleanup_policy_ struct policy *nodes = load("[exclude]\nnode = 2\n");
        _cleanup_policy_ struct policy *devices = load("[exclude]\ndevice = dax0.0\n");
        _cleanup_policy_ struct policy *plain = load("[zones]\ndefault = online_movable\n");
        struct memory_identity id = block(40, -1);
        struct rule_decision d;

        d = decide(nodes, id);
        assert_int_equal(d.origin, RULE_UNDECIDED);
        assert_non_null(strstr(d.undecided, "node not known"));
        id.node = 2;
        id.node_guessed = true;                 /* a guess is not enough to exclude, nor to let go */
        d = decide(nodes, id);
        assert_int_equal(d.origin, RULE_UNDECIDED);
        assert_non_null(strstr(d.undecided, "only guessed"));
        id.node_guessed = false;
        assert_int_equal(decide(nodes, id).origin, RULE_EXCLUDE);
        /* Without node rules, an unknown node does not matter. */
        assert_int_equal(decide(plain, block(40, -1)).origin, RULE_DEFAULT);

        id = block(40, 0);
        id.dax_unknown = true;
        d = decide(devices, id);
        assert_int_equal(d.origin, RULE_UNDECIDED);
        assert_non_null(strstr(d.undecided, "dax devices could not all be read"));
        assert_int_equal(decide(plain, id).origin, RULE_DEFAULT);
}

/*
 * Bad media of its dax device keeps a block offline right after [exclude],
 * before every zone rule, unless the first [device] rule that says so
 * allows it; media that cannot be known leaves it undecided.
 */
static void test_bad_media(void **state) {
        _cleanup_policy_ struct policy *p = load("[zones]\ndefault = online_movable\n"
                                                 "[device fast]\nmatch_device = dax0.0\nzone = online_kernel\n"
                                                 "[exclude]\nblock = 41\n");
        _cleanup_policy_ struct policy *allow = load("[device no]\nmatch_device = dax1.0\nallow_badblocks = no\n"
                                                     "[device any]\nallow_badblocks = yes\nzone = online\n");
        struct memory_identity id = block(40, 2);
        const struct device_rule *rule;
        struct rule_decision d;
        char buf[256];

        (void) state;
        id.dax_device = "dax0.0";
        id.region = 0;
        assert_int_equal(decide(p, id).origin, RULE_DEVICE);
        assert_int_equal(rules_bad_media(p, &id, &rule), BAD_MEDIA_NONE);

        id.bad_sectors = 8;
        d = decide(p, id);
        assert_int_equal(d.origin, RULE_BAD_MEDIA);
        assert_int_equal(d.zone, ZONE_SKIP);
        assert_true(d.bad_media);
        assert_false(rule_is_explicit(d.origin));
        assert_string_equal(rules_reason(&d, buf, sizeof(buf)),
                            "bad media: 8 bad 512-byte sectors in dax0.0, and no [device] rule allows them "
                            "(allow_badblocks)");
        assert_string_equal(rule_origin_to_string(d.origin), "bad-media");
        /* [exclude] still comes first: nothing to say about memory never touched. */
        id.block_id = 41;
        assert_int_equal(decide(p, id).origin, RULE_EXCLUDE);
        id.block_id = 40;

        id.bad_sectors = 0;
        id.badblocks_unknown = true;
        d = decide(p, id);
        assert_int_equal(d.origin, RULE_UNDECIDED);
        assert_true(d.bad_media);
        assert_non_null(strstr(d.undecided, "bad blocks could not be read"));

        /* Allowed: the zone rules go on as if nothing were known. */
        d = decide(allow, id);
        assert_int_equal(d.origin, RULE_DEVICE);
        assert_int_equal(d.zone, ZONE_ONLINE);
        assert_false(d.bad_media);
        assert_int_equal(rules_bad_media(allow, &id, &rule), BAD_MEDIA_ALLOWED);
        assert_string_equal(rule->name, "any");
        id.dax_device = "dax1.0";
        id.bad_sectors = 8;
        id.badblocks_unknown = false;
        d = decide(allow, id);
        assert_int_equal(d.origin, RULE_BAD_MEDIA);
        assert_string_equal(rules_reason(&d, buf, sizeof(buf)),
                            "bad media: 8 bad 512-byte sectors in dax1.0; device rule no says allow_badblocks = no");

        /* Memory of no dax device has no list to look at. */
        id.dax_device = NULL;
        assert_int_equal(rules_bad_media(p, &id, &rule), BAD_MEDIA_NONE);
        assert_null(rule);
        assert_string_equal(bad_media_to_string(BAD_MEDIA_REFUSED), "refused");
}

/* A device is excluded by a range only when the range holds all of it; a block by one byte. */
static void test_whole_device(void **state) {
        _cleanup_policy_ struct policy *p = load("[exclude]\nrange = 0x100000000+1G\n");
        struct memory_identity dev = { .start = 0xf8000000, .end = 0x108000000, .whole_device = true,
                                       .block_id = UINT64_MAX, .node = 0, .region = -1, .dax_device = "dax0.0" };

        assert_int_equal(decide(p, dev).origin, RULE_PMEM_DEFAULT);
        dev.start = 0x100000000;
        assert_int_equal(decide(p, dev).origin, RULE_EXCLUDE);
        assert_int_equal(decide(p, block(0xff000000 / BS, 0)).origin, RULE_DEFAULT);
        assert_int_equal(decide(p, block(0x100000000 / BS, 0)).origin, RULE_EXCLUDE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_precedence),
                cmocka_unit_test(test_undecided),
                cmocka_unit_test(test_whole_device),
                cmocka_unit_test(test_bad_media),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
