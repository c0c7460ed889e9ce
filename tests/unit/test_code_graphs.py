"""The code agent on fixture trees with hand-checked expected graphs: exact node and edge sets.

The Java tree (fixtures/code/java) has an inheritance chain (AdminUser -> User -> BaseEntity), interfaces
extending interfaces and an enum implementing one, overloads (find(long)/find(String) across an interface
hierarchy, PasswordHasher.hash), nested types (AuthService.Token, AuthService.Outcome), calls on fields,
parameters and locals of declared type, static calls, this/super calls (super(...) to a constructor), and SQL
reads and writes (SELECT/JOIN, INSERT, UPDATE, DELETE, MERGE; in a constant, a concatenation, lower case). The
Python tree (fixtures/code/python) has the same through ``ast``: an ABC interface, an Enum, a nested class,
``super()``, attribute types from ``__init__``, module-alias calls, instantiations and SQL. What the sources
do not make knowable (``name()`` inherited from java.lang.Enum) is left out, not guessed; Python's calls
follow values (``order.pay()`` on the ``Order`` that ``get()`` returns).
"""

from __future__ import annotations

from igg.agents.code import CodeAgent
from tests.codegraph import CODE_FIXTURES, code_request, drive, graph_sets, sources

JAVA_NODES = {
    "Class com.acme.model.AdminUser",
    "Class com.acme.model.BaseEntity",
    "Class com.acme.model.User",
    "Class com.acme.repo.JdbcUserRepository",
    "Class com.acme.service.AuthService",
    "Class com.acme.service.AuthService.Token",
    "Class com.acme.service.PasswordHasher",
    "DatabaseTable audit_log",
    "DatabaseTable sessions",
    "DatabaseTable user_roles",
    "DatabaseTable user_stats",
    "DatabaseTable users",
    "Enum com.acme.model.Role",
    "Enum com.acme.service.AuthService.Outcome",
    "Interface com.acme.model.Labeled",
    "Interface com.acme.repo.Repository",
    "Interface com.acme.repo.UserRepository",
    "Method com.acme.model.AdminUser#AdminUser(String)",
    "Method com.acme.model.AdminUser#getName()",
    "Method com.acme.model.BaseEntity#getId()",
    "Method com.acme.model.Labeled#label()",
    "Method com.acme.model.Role#label()",
    "Method com.acme.model.User#User(String)",
    "Method com.acme.model.User#getName()",
    "Method com.acme.repo.JdbcUserRepository#JdbcUserRepository(Connection)",
    "Method com.acme.repo.JdbcUserRepository#execute(String, Object...)",
    "Method com.acme.repo.JdbcUserRepository#find(String)",
    "Method com.acme.repo.JdbcUserRepository#find(long)",
    "Method com.acme.repo.JdbcUserRepository#purge()",
    "Method com.acme.repo.JdbcUserRepository#query(String, Object)",
    "Method com.acme.repo.JdbcUserRepository#rename(long, String)",
    "Method com.acme.repo.JdbcUserRepository#save(User)",
    "Method com.acme.repo.Repository#find(long)",
    "Method com.acme.repo.Repository#save(T)",
    "Method com.acme.repo.UserRepository#find(String)",
    "Method com.acme.service.AuthService#AuthService(UserRepository)",
    "Method com.acme.service.AuthService#audit(User)",
    "Method com.acme.service.AuthService#login(String, String)",
    "Method com.acme.service.AuthService#promote(long)",
    "Method com.acme.service.AuthService.Token#Token(String)",
    "Method com.acme.service.AuthService.Token#count()",
    "Method com.acme.service.PasswordHasher#PasswordHasher()",
    "Method com.acme.service.PasswordHasher#hash(String)",
    "Method com.acme.service.PasswordHasher#hash(String, int)",
    "Module src/main/java/com/acme/model/AdminUser.java",
    "Module src/main/java/com/acme/model/BaseEntity.java",
    "Module src/main/java/com/acme/model/Labeled.java",
    "Module src/main/java/com/acme/model/Role.java",
    "Module src/main/java/com/acme/model/User.java",
    "Module src/main/java/com/acme/repo/JdbcUserRepository.java",
    "Module src/main/java/com/acme/repo/Repository.java",
    "Module src/main/java/com/acme/repo/UserRepository.java",
    "Module src/main/java/com/acme/service/AuthService.java",
    "Module src/main/java/com/acme/service/PasswordHasher.java",
    "Package com",
    "Package com.acme",
    "Package com.acme.model",
    "Package com.acme.repo",
    "Package com.acme.service",
    "Package java.sql",
}

JAVA_EDGES = {
    "CALLS com.acme.model.User -> com.acme.model.BaseEntity",
    "IMPORTS src/main/java/com/acme/repo/JdbcUserRepository.java -> src/main/java/com/acme/model/User.java",
    "IMPORTS src/main/java/com/acme/repo/UserRepository.java -> src/main/java/com/acme/model/User.java",
    "IMPORTS src/main/java/com/acme/service/AuthService.java -> src/main/java/com/acme/model/AdminUser.java",
    "IMPORTS src/main/java/com/acme/service/AuthService.java -> src/main/java/com/acme/model/User.java",
    (
        "IMPORTS src/main/java/com/acme/service/AuthService.java ->"
        " src/main/java/com/acme/repo/UserRepository.java"
    ),
    "IMPORTS_SYMBOL src/main/java/com/acme/repo/JdbcUserRepository.java -> com.acme.model.User",
    "IMPORTS_SYMBOL src/main/java/com/acme/repo/UserRepository.java -> com.acme.model.User",
    "IMPORTS_SYMBOL src/main/java/com/acme/service/AuthService.java -> com.acme.model.AdminUser",
    "IMPORTS_SYMBOL src/main/java/com/acme/service/AuthService.java -> com.acme.model.User",
    "IMPORTS_SYMBOL src/main/java/com/acme/service/AuthService.java -> com.acme.repo.UserRepository",
    "CALLS com.acme.model.AdminUser#AdminUser(String) -> com.acme.model.User#User(String)",
    "CALLS com.acme.model.AdminUser#getName() -> com.acme.model.User#getName()",
    (
        "CALLS com.acme.repo.JdbcUserRepository#find(String) ->"
        " com.acme.repo.JdbcUserRepository#query(String, Object)"
    ),
    (
        "CALLS com.acme.repo.JdbcUserRepository#find(long) -> com.acme.repo.JdbcUserRepository#query(String,"
        " Object)"
    ),
    (
        "CALLS com.acme.repo.JdbcUserRepository#purge() -> com.acme.repo.JdbcUserRepository#execute(String,"
        " Object...)"
    ),
    (
        "CALLS com.acme.repo.JdbcUserRepository#rename(long, String) ->"
        " com.acme.repo.JdbcUserRepository#execute(String, Object...)"
    ),
    "CALLS com.acme.repo.JdbcUserRepository#save(User) -> com.acme.model.User#getName()",
    (
        "CALLS com.acme.repo.JdbcUserRepository#save(User) ->"
        " com.acme.repo.JdbcUserRepository#execute(String, Object...)"
    ),
    "CALLS com.acme.service.AuthService#audit(User) -> com.acme.service.AuthService.Token#count()",
    "CALLS com.acme.service.AuthService#login(String, String) -> com.acme.model.User#getName()",
    "CALLS com.acme.service.AuthService#login(String, String) -> com.acme.repo.UserRepository#find(String)",
    "CALLS com.acme.service.AuthService#login(String, String) -> com.acme.service.AuthService#audit(User)",
    (
        "CALLS com.acme.service.AuthService#login(String, String) ->"
        " com.acme.service.PasswordHasher#hash(String)"
    ),
    "CALLS com.acme.service.AuthService#promote(long) -> com.acme.model.User#getName()",
    "CALLS com.acme.service.AuthService#promote(long) -> com.acme.repo.Repository#find(long)",
    "CALLS com.acme.service.AuthService#promote(long) -> com.acme.repo.Repository#save(T)",
    "CALLS com.acme.service.PasswordHasher#hash(String) -> com.acme.service.PasswordHasher#hash(String, int)",
    "CONTAINS com -> com.acme",
    "CONTAINS com.acme -> com.acme.model",
    "CONTAINS com.acme -> com.acme.repo",
    "CONTAINS com.acme -> com.acme.service",
    "CONTAINS com.acme.model -> src/main/java/com/acme/model/AdminUser.java",
    "CONTAINS com.acme.model -> src/main/java/com/acme/model/BaseEntity.java",
    "CONTAINS com.acme.model -> src/main/java/com/acme/model/Labeled.java",
    "CONTAINS com.acme.model -> src/main/java/com/acme/model/Role.java",
    "CONTAINS com.acme.model -> src/main/java/com/acme/model/User.java",
    "CONTAINS com.acme.model.AdminUser -> com.acme.model.AdminUser#AdminUser(String)",
    "CONTAINS com.acme.model.AdminUser -> com.acme.model.AdminUser#getName()",
    "CONTAINS com.acme.model.BaseEntity -> com.acme.model.BaseEntity#getId()",
    "CONTAINS com.acme.model.Labeled -> com.acme.model.Labeled#label()",
    "CONTAINS com.acme.model.Role -> com.acme.model.Role#label()",
    "CONTAINS com.acme.model.User -> com.acme.model.User#User(String)",
    "CONTAINS com.acme.model.User -> com.acme.model.User#getName()",
    "CONTAINS com.acme.repo -> src/main/java/com/acme/repo/JdbcUserRepository.java",
    "CONTAINS com.acme.repo -> src/main/java/com/acme/repo/Repository.java",
    "CONTAINS com.acme.repo -> src/main/java/com/acme/repo/UserRepository.java",
    (
        "CONTAINS com.acme.repo.JdbcUserRepository ->"
        " com.acme.repo.JdbcUserRepository#JdbcUserRepository(Connection)"
    ),
    (
        "CONTAINS com.acme.repo.JdbcUserRepository -> com.acme.repo.JdbcUserRepository#execute(String,"
        " Object...)"
    ),
    "CONTAINS com.acme.repo.JdbcUserRepository -> com.acme.repo.JdbcUserRepository#find(String)",
    "CONTAINS com.acme.repo.JdbcUserRepository -> com.acme.repo.JdbcUserRepository#find(long)",
    "CONTAINS com.acme.repo.JdbcUserRepository -> com.acme.repo.JdbcUserRepository#purge()",
    "CONTAINS com.acme.repo.JdbcUserRepository -> com.acme.repo.JdbcUserRepository#query(String, Object)",
    "CONTAINS com.acme.repo.JdbcUserRepository -> com.acme.repo.JdbcUserRepository#rename(long, String)",
    "CONTAINS com.acme.repo.JdbcUserRepository -> com.acme.repo.JdbcUserRepository#save(User)",
    "CONTAINS com.acme.repo.Repository -> com.acme.repo.Repository#find(long)",
    "CONTAINS com.acme.repo.Repository -> com.acme.repo.Repository#save(T)",
    "CONTAINS com.acme.repo.UserRepository -> com.acme.repo.UserRepository#find(String)",
    "CONTAINS com.acme.service -> src/main/java/com/acme/service/AuthService.java",
    "CONTAINS com.acme.service -> src/main/java/com/acme/service/PasswordHasher.java",
    "CONTAINS com.acme.service.AuthService -> com.acme.service.AuthService#AuthService(UserRepository)",
    "CONTAINS com.acme.service.AuthService -> com.acme.service.AuthService#audit(User)",
    "CONTAINS com.acme.service.AuthService -> com.acme.service.AuthService#login(String, String)",
    "CONTAINS com.acme.service.AuthService -> com.acme.service.AuthService#promote(long)",
    "CONTAINS com.acme.service.AuthService -> com.acme.service.AuthService.Outcome",
    "CONTAINS com.acme.service.AuthService -> com.acme.service.AuthService.Token",
    "CONTAINS com.acme.service.AuthService.Token -> com.acme.service.AuthService.Token#Token(String)",
    "CONTAINS com.acme.service.AuthService.Token -> com.acme.service.AuthService.Token#count()",
    "CONTAINS com.acme.service.PasswordHasher -> com.acme.service.PasswordHasher#PasswordHasher()",
    "CONTAINS com.acme.service.PasswordHasher -> com.acme.service.PasswordHasher#hash(String)",
    "CONTAINS com.acme.service.PasswordHasher -> com.acme.service.PasswordHasher#hash(String, int)",
    "CONTAINS src/main/java/com/acme/model/AdminUser.java -> com.acme.model.AdminUser",
    "CONTAINS src/main/java/com/acme/model/BaseEntity.java -> com.acme.model.BaseEntity",
    "CONTAINS src/main/java/com/acme/model/Labeled.java -> com.acme.model.Labeled",
    "CONTAINS src/main/java/com/acme/model/Role.java -> com.acme.model.Role",
    "CONTAINS src/main/java/com/acme/model/User.java -> com.acme.model.User",
    "CONTAINS src/main/java/com/acme/repo/JdbcUserRepository.java -> com.acme.repo.JdbcUserRepository",
    "CONTAINS src/main/java/com/acme/repo/Repository.java -> com.acme.repo.Repository",
    "CONTAINS src/main/java/com/acme/repo/UserRepository.java -> com.acme.repo.UserRepository",
    "CONTAINS src/main/java/com/acme/service/AuthService.java -> com.acme.service.AuthService",
    "CONTAINS src/main/java/com/acme/service/PasswordHasher.java -> com.acme.service.PasswordHasher",
    "EXTENDS com.acme.model.AdminUser -> com.acme.model.User",
    "EXTENDS com.acme.model.User -> com.acme.model.BaseEntity",
    "EXTENDS com.acme.repo.UserRepository -> com.acme.repo.Repository",
    "IMPLEMENTS com.acme.model.Role -> com.acme.model.Labeled",
    "IMPLEMENTS com.acme.repo.JdbcUserRepository -> com.acme.repo.UserRepository",
    "IMPORTS src/main/java/com/acme/repo/JdbcUserRepository.java -> java.sql",
    "INSTANTIATES com.acme.service.AuthService#login(String, String) -> com.acme.service.AuthService.Token",
    "INSTANTIATES com.acme.service.AuthService#promote(long) -> com.acme.model.AdminUser",
    "READS_FROM com.acme.repo.JdbcUserRepository#find(String) -> user_roles",
    "READS_FROM com.acme.repo.JdbcUserRepository#find(String) -> users",
    "READS_FROM com.acme.repo.JdbcUserRepository#find(long) -> users",
    "READS_FROM com.acme.repo.JdbcUserRepository#purge() -> users",
    "WRITES_TO com.acme.repo.JdbcUserRepository#purge() -> sessions",
    "WRITES_TO com.acme.repo.JdbcUserRepository#purge() -> user_stats",
    "WRITES_TO com.acme.repo.JdbcUserRepository#rename(long, String) -> users",
    "WRITES_TO com.acme.repo.JdbcUserRepository#save(User) -> audit_log",
    "WRITES_TO com.acme.repo.JdbcUserRepository#save(User) -> users",
}

PYTHON_NODES = {
    "Class shop.models.Entity",
    "Class shop.models.Order",
    "Class shop.models.PriorityOrder",
    "Class shop.models.PriorityOrder.Meta",
    "Class shop.repository.SqlRepository",
    "Class shop.service.AuditTrail",
    "Class shop.service.OrderService",
    "DatabaseTable inventory",
    "DatabaseTable orders",
    "Enum shop.models.Status",
    "Function shop.service.helper",
    "Function shop.util.money.format_amount",
    "Function shop.util.money.parse_amount",
    "Interface shop.repository.Repository",
    "Method shop.models.Entity#key(self)",
    "Method shop.models.Order#key(self)",
    "Method shop.models.Order#pay(self)",
    "Method shop.models.PriorityOrder#notify(self)",
    "Method shop.models.PriorityOrder#pay(self)",
    "Method shop.repository.Repository#add(self, order: Order)",
    "Method shop.repository.Repository#get(self, order_id: int)",
    "Method shop.repository.SqlRepository#__init__(self, connection)",
    "Method shop.repository.SqlRepository#add(self, order: Order)",
    "Method shop.repository.SqlRepository#archive(self)",
    "Method shop.repository.SqlRepository#get(self, order_id: int)",
    "Method shop.service.AuditTrail#record(self, order: models.Order)",
    "Method shop.service.OrderService#__init__(self, repository: Repository)",
    "Method shop.service.OrderService#checkout(self, order_id: int)",
    "Method shop.service.OrderService#create(connection)",
    "Module shop/__init__.py",
    "Module shop/models.py",
    "Module shop/repository.py",
    "Module shop/service.py",
    "Module shop/util/__init__.py",
    "Module shop/util/money.py",
    "Package abc",
    "Package dataclasses",
    "Package enum",
    "Package logging",
    "Package shop",
    "Package shop.util",
}

PYTHON_EDGES = {
    "IMPORTS shop/repository.py -> shop/models.py",
    "IMPORTS shop/service.py -> shop/repository.py",
    "IMPORTS_SYMBOL shop/repository.py -> shop.models.Order",
    "IMPORTS_SYMBOL shop/service.py -> shop.repository.Repository",
    "IMPORTS_SYMBOL shop/service.py -> shop.repository.SqlRepository",
    "CALLS shop.models.Order#key(self) -> shop.models.Entity#key(self)",
    "CALLS shop.models.PriorityOrder#pay(self) -> shop.models.Order#pay(self)",
    "CALLS shop.models.PriorityOrder#pay(self) -> shop.models.PriorityOrder#notify(self)",
    "CALLS shop.service.AuditTrail#record(self, order: models.Order) -> shop.models.Order#key(self)",
    (
        "CALLS shop.service.OrderService#checkout(self, order_id: int) ->"
        " shop.repository.Repository#get(self, order_id: int)"
    ),
    # the repository create() passes in, and the Order its get() builds (Python's calls follow values)
    (
        "CALLS shop.service.OrderService#checkout(self, order_id: int) ->"
        " shop.repository.SqlRepository#get(self, order_id: int)"
    ),
    "CALLS shop.service.OrderService#checkout(self, order_id: int) -> shop.models.Order#pay(self)",
    (
        "CALLS shop.service.OrderService#create(connection) -> shop.repository.SqlRepository#__init__(self,"
        " connection)"
    ),
    (
        "CALLS shop.service.OrderService#create(connection) -> shop.service.OrderService#__init__(self,"
        " repository: Repository)"
    ),
    (
        "CALLS shop.service.OrderService#checkout(self, order_id: int) ->"
        " shop.service.AuditTrail#record(self, order: models.Order)"
    ),
    "CALLS shop.service.OrderService#checkout(self, order_id: int) -> shop.service.helper",
    "CALLS shop.service.OrderService#checkout(self, order_id: int) -> shop.util.money.format_amount",
    "CALLS shop.service.helper -> shop.models.Order#key(self)",
    "CONTAINS shop -> shop.util",
    "CONTAINS shop -> shop/__init__.py",
    "CONTAINS shop -> shop/models.py",
    "CONTAINS shop -> shop/repository.py",
    "CONTAINS shop -> shop/service.py",
    "CONTAINS shop.models.Entity -> shop.models.Entity#key(self)",
    "CONTAINS shop.models.Order -> shop.models.Order#key(self)",
    "CONTAINS shop.models.Order -> shop.models.Order#pay(self)",
    "CONTAINS shop.models.PriorityOrder -> shop.models.PriorityOrder#notify(self)",
    "CONTAINS shop.models.PriorityOrder -> shop.models.PriorityOrder#pay(self)",
    "CONTAINS shop.models.PriorityOrder -> shop.models.PriorityOrder.Meta",
    "CONTAINS shop.repository.Repository -> shop.repository.Repository#add(self, order: Order)",
    "CONTAINS shop.repository.Repository -> shop.repository.Repository#get(self, order_id: int)",
    "CONTAINS shop.repository.SqlRepository -> shop.repository.SqlRepository#__init__(self, connection)",
    "CONTAINS shop.repository.SqlRepository -> shop.repository.SqlRepository#add(self, order: Order)",
    "CONTAINS shop.repository.SqlRepository -> shop.repository.SqlRepository#archive(self)",
    "CONTAINS shop.repository.SqlRepository -> shop.repository.SqlRepository#get(self, order_id: int)",
    "CONTAINS shop.service.AuditTrail -> shop.service.AuditTrail#record(self, order: models.Order)",
    "CONTAINS shop.service.OrderService -> shop.service.OrderService#__init__(self, repository: Repository)",
    "CONTAINS shop.service.OrderService -> shop.service.OrderService#checkout(self, order_id: int)",
    "CONTAINS shop.service.OrderService -> shop.service.OrderService#create(connection)",
    "CONTAINS shop.util -> shop/util/__init__.py",
    "CONTAINS shop.util -> shop/util/money.py",
    "CONTAINS shop/models.py -> shop.models.Entity",
    "CONTAINS shop/models.py -> shop.models.Order",
    "CONTAINS shop/models.py -> shop.models.PriorityOrder",
    "CONTAINS shop/models.py -> shop.models.Status",
    "CONTAINS shop/repository.py -> shop.repository.Repository",
    "CONTAINS shop/repository.py -> shop.repository.SqlRepository",
    "CONTAINS shop/service.py -> shop.service.AuditTrail",
    "CONTAINS shop/service.py -> shop.service.OrderService",
    "CONTAINS shop/service.py -> shop.service.helper",
    "CONTAINS shop/util/money.py -> shop.util.money.format_amount",
    "CONTAINS shop/util/money.py -> shop.util.money.parse_amount",
    "EXTENDS shop.models.Order -> shop.models.Entity",
    "EXTENDS shop.models.PriorityOrder -> shop.models.Order",
    "IMPLEMENTS shop.repository.SqlRepository -> shop.repository.Repository",
    "IMPORTS shop/models.py -> dataclasses",
    "IMPORTS shop/models.py -> enum",
    "IMPORTS shop/repository.py -> abc",
    "IMPORTS shop/service.py -> logging",
    "IMPORTS shop/service.py -> shop/models.py",
    "IMPORTS shop/service.py -> shop/util/money.py",
    "INSTANTIATES shop.repository.SqlRepository#get(self, order_id: int) -> shop.models.Order",
    (
        "INSTANTIATES shop.service.OrderService#__init__(self, repository: Repository) ->"
        " shop.service.AuditTrail"
    ),
    "INSTANTIATES shop.service.OrderService#create(connection) -> shop.repository.SqlRepository",
    "INSTANTIATES shop.service.OrderService#create(connection) -> shop.service.OrderService",
    "READS_FROM shop.repository.SqlRepository#get(self, order_id: int) -> orders",
    "WRITES_TO shop.repository.SqlRepository#add(self, order: Order) -> inventory",
    "WRITES_TO shop.repository.SqlRepository#add(self, order: Order) -> orders",
    "WRITES_TO shop.repository.SqlRepository#archive(self) -> orders",
}


def _map(lang: str):
    state, turns, verdicts = drive(CodeAgent(sources=sources(CODE_FIXTURES / lang)), code_request())
    assert turns[-1]["finished"] is True
    assert all(v.accepted for vs in verdicts for v in vs), [
        v.message for vs in verdicts for v in vs if not v.accepted
    ]
    return state, turns


def test_java_tree_maps_to_the_expected_graph_exactly():
    state, _ = _map("java")
    nodes, edges = graph_sets(state)
    assert nodes == JAVA_NODES
    assert edges == JAVA_EDGES


def test_python_tree_maps_to_the_expected_graph_exactly():
    state, _ = _map("python")
    nodes, edges = graph_sets(state)
    assert nodes == PYTHON_NODES
    assert edges == PYTHON_EDGES


def test_one_file_per_turn_and_a_finishing_turn_of_its_own():
    state, turns = _map("java")
    files = sorted(
        p.relative_to(CODE_FIXTURES / "java").as_posix() for p in (CODE_FIXTURES / "java").rglob("*.java")
    )
    for turn, path in zip(turns, files, strict=False):
        assert turn["reasoning"].startswith(f"Static analysis of {path}:")
    assert turns[-1]["actions"] == [] and turns[-1]["finished"]
    assert "Mapped 10 files" in turns[-1]["reasoning"]


def test_mapping_is_deterministic():
    first, _ = _map("python")
    second, _ = _map("python")
    assert graph_sets(first) == graph_sets(second)
    assert list(first.graph.nodes) == list(second.graph.nodes)
