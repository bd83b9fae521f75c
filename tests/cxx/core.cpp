/* core: environment, comm ownership (every owned communicator freed exactly once, counted by
 * an attribute delete callback; 4200 dup/free cycles would exhaust context ids if one leaked),
 * views, interop with raw MPI_Comm both ways, groups, info objects, names. */
#include "cxxtest.hpp"

#include <vector>

static int comms_freed = 0;
static int count_free(MPI_Comm, int, void *, void *) {
    ++comms_freed;
    return MPI_SUCCESS;
}

// Takes a hympi::comm: called with raw MPI_Comm arguments below.
static int size_of(const hympi::comm &c) { return c.size(); }
// Takes a raw MPI_Comm: called with hympi::comm arguments below.
static int raw_rank(MPI_Comm c) {
    int r = -1;
    MPI_Comm_rank(c, &r);
    return r;
}

int main(int argc, char **argv) {
    hympi::environment env(argc, argv, hympi::thread_level::serialized);
    CHECK(env.owns());
    CHECK(hympi::environment::initialized());
    CHECK(!hympi::environment::finalized());
    CHECK(env.provided() == hympi::environment::query_thread());
    CHECK(hympi::environment::is_thread_main());
    CHECK(!hympi::environment::processor_name().empty());
    CHECK(hympi::environment::wtime() > 0.0);

    int r = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    auto world = hympi::comm::world();
    CHECK_EQ(world.rank(), r);
    CHECK_EQ(world.size(), n);
    CHECK(!world.owned());
    CHECK(world.native() == MPI_COMM_WORLD);
    CHECK(world.compare(hympi::comm::self()) == (n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL));
    {
        MPI_Errhandler eh;
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
        CHECK(eh == MPI_ERRORS_RETURN);
        MPI_Errhandler_free(&eh);
    }

    int kv = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_free, &kv, nullptr);

    // Owned communicators: dup, moves, split.
    {
        hympi::comm d = world.dup();
        CHECK(d.owned());
        CHECK_EQ(world.compare(d), MPI_CONGRUENT);
        MPI_Comm_set_attr(d, kv, nullptr);
        hympi::comm moved = std::move(d);
        CHECK(d.is_null());
        CHECK(!d.owned());
        hympi::comm other;
        CHECK(!other);
        other = std::move(moved);
        CHECK(moved.is_null());
        CHECK_EQ(other.size(), n);
        CHECK_EQ(other.rank(), r);

        hympi::comm sp = world.split(r % 2, -r);
        MPI_Comm_set_attr(sp, kv, nullptr);
        int expect_size = (n + 1 - r % 2) / 2;
        CHECK_EQ(sp.size(), expect_size);
        // key -r reverses the order within each color
        CHECK_EQ(sp.rank(), expect_size - 1 - r / 2);

        hympi::comm node = world.split_type(MPI_COMM_TYPE_SHARED, r);
        MPI_Comm_set_attr(node, kv, nullptr);
        CHECK_EQ(node.size(), n); // every rank runs on this node
        CHECK_EQ(node.rank(), r);

        hympi::comm none = world.split(MPI_UNDEFINED);
        CHECK(none.is_null());
        CHECK(!none.owned());
        CHECK_EQ(comms_freed, 0);
    }
    CHECK_EQ(comms_freed, 3);

    // A view of a raw communicator frees nothing; adopt takes ownership.
    {
        MPI_Comm raw;
        MPI_Comm_dup(MPI_COMM_WORLD, &raw);
        MPI_Comm_set_attr(raw, kv, nullptr);
        {
            hympi::comm v = raw; // implicit: raw MPI_Comm -> non-owning view
            CHECK(!v.owned());
            CHECK_EQ(v.rank(), r);
            hympi::comm v2 = v.as_view();
            CHECK(!v2.owned());
            CHECK(v2.native() == raw);
        }
        CHECK_EQ(comms_freed, 3);
        CHECK_EQ(size_of(raw), n);              // MPI_Comm -> const hympi::comm&
        CHECK_EQ(size_of(MPI_COMM_WORLD), n);
        CHECK_EQ(raw_rank(world), r);           // hympi::comm -> MPI_Comm
        {
            hympi::comm owner = hympi::comm::adopt(raw);
            CHECK(owner.owned());
            CHECK_EQ(raw_rank(owner), r);
        }
        CHECK_EQ(comms_freed, 4);
    }

    // Explicit free and release.
    {
        hympi::comm d = world.dup();
        MPI_Comm_set_attr(d, kv, nullptr);
        d.free();
        CHECK_EQ(comms_freed, 5);
        CHECK(d.is_null());
        MPI_Comm raw;
        {
            hympi::comm e = world.dup();
            raw = e.release();
        }
        int sz = 0;
        CHECK_EQ(MPI_Comm_size(raw, &sz), MPI_SUCCESS);
        CHECK_EQ(sz, n);
        CHECK_EQ(MPI_Comm_free(&raw), MPI_SUCCESS);
    }

    // Leak check: more dup/free cycles than an implementation has context ids (4096 in hympi,
    // about 2048 in MPICH); a communicator that is not freed makes a later dup fail. Duplicates
    // of MPI_COMM_SELF take context ids as well, without waiting for other ranks.
    try {
        hympi::comm self = hympi::comm::self();
        for (int i = 0; i < 4200; ++i) {
            hympi::comm d = self.dup();
            if (i % 1000 == 0)
                CHECK_EQ(d.size(), 1);
        }
        for (int i = 0; i < 20; ++i) {
            hympi::comm d = world.dup();
            CHECK_EQ(d.size(), n);
        }
    } catch (const hympi::error &e) {
        cxxtest::fail(__FILE__, __LINE__, "4200 dup/free cycles", e.what());
    }

    // Groups.
    {
        hympi::group g = world.get_group();
        CHECK(g.owned());
        CHECK_EQ(g.size(), n);
        CHECK_EQ(g.rank(), r);
        hympi::group first = g.incl({0});
        CHECK_EQ(first.size(), 1);
        CHECK_EQ(first.rank(), r == 0 ? 0 : MPI_UNDEFINED);
        hympi::group rest = g.excl({0});
        CHECK_EQ(rest.size(), n - 1);
        hympi::group back = first.union_with(rest);
        CHECK_EQ(back.size(), n);
        CHECK_EQ(back.compare(g), MPI_IDENT);
        CHECK_EQ(first.intersection(rest).size(), 0);
        CHECK_EQ(g.difference(first).size(), n - 1);
        std::vector<int> t = g.translate_ranks({0, n - 1}, world.get_group());
        CHECK(t.size() == 2 && t[0] == 0 && t[1] == n - 1);
        hympi::comm c0 = world.create(first);
        CHECK(r == 0 ? (!c0.is_null() && c0.size() == 1) : c0.is_null());
    }

    // Info objects.
    {
        hympi::info empty;
        CHECK(empty.is_null());
        CHECK_EQ(empty.nkeys(), 0);
        CHECK(!empty.get("x").has_value());
        hympi::info i{{"alpha", "1"}, {"beta", "two words"}};
        CHECK(i.owned());
        CHECK_EQ(i.nkeys(), 2);
        CHECK(i.get("alpha") == std::optional<std::string>("1"));
        CHECK(i.get("beta") == std::optional<std::string>("two words"));
        CHECK(!i.get("gamma").has_value());
        hympi::info j = i.dup();
        j.erase("alpha");
        CHECK_EQ(j.nkeys(), 1);
        CHECK_EQ(i.nkeys(), 2);
        CHECK(j.nth_key(0) == "beta");
        hympi::info lazily;
        lazily.set("k", "v");
        CHECK(!lazily.is_null());
        CHECK(lazily.get("k") == std::optional<std::string>("v"));
        CHECK_THROWS_CLASS(j.erase("alpha"), MPI_ERR_INFO_NOKEY);
        hympi::info view = MPI_INFO_NULL;
        CHECK(!view.owned());
    }

    // Names.
    {
        hympi::comm d = world.dup();
        d.set_name("cxx-core");
        CHECK(d.name() == "cxx-core");
    }

    MPI_Comm_free_keyval(&kv);
    cxxtest::finish();
    return 0;
}
