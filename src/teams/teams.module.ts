import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { InvitationsRepository } from './invitations.repository.js';
import { MembershipEventsRepository } from './membership-events.repository.js';
import { InvitationAcceptController, MemberUsageController, TeamsController } from './teams.controller.js';
import { TeamsService } from './teams.service.js';

@Module({
  imports: [ApiKeysModule, AuthModule, OrganizationsModule],
  controllers: [TeamsController, InvitationAcceptController, MemberUsageController],
  providers: [TeamsService, InvitationsRepository, MembershipEventsRepository],
})
export class TeamsModule {}
