"""The control lease through the Python client, against a daemon started with --lease-in-sim."""

from __future__ import annotations

import grpc
import pytest

from fakesim_hil import Client, FakesimError


def test_one_client_holds_the_lease_others_are_refused_naming_it(daemon_factory) -> None:
    daemon = daemon_factory("--lease-in-sim")
    with Client(daemon.address) as policy, Client(daemon.address) as laptop:
        with pytest.raises(FakesimError) as refused:
            laptop.reset("so101_tabletop", 0, 0)
        assert refused.value.reason == "lease_required"

        policy.acquire_lease("gpu-box", ttl_ms=5000)
        policy.reset("so101_tabletop", 0, 0)
        assert policy.status().lease_holder == "gpu-box"
        with pytest.raises(FakesimError) as refused:
            laptop.move(dx=0.01)
        assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert refused.value.reason == "lease_held"
        assert "gpu-box" in str(refused.value)
        assert laptop.session_info().step == 0, "reads never need the lease"

        policy.renew_lease()
        policy.move(dx=0.01)
        taken = laptop.acquire_lease("laptop", takeover=True)
        assert taken.previous_holder == "gpu-box"
        with pytest.raises(FakesimError) as refused:
            policy.move(dx=0.01)
        assert refused.value.reason == "lease_held"
        laptop.release_lease()
        assert not laptop.status().lease_holder
